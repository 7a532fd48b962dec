/**
 * `--profile`: one more server under `node --cpu-prof`, through its start-up and one listPets
 * limit=20 run, summarised by where the time goes (self time per function and per package,
 * inclusive time of library and project frames).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../src/paths.js';
import { callTree, samplesIn, type CpuProfile } from './cpuProfile.js';
import { runLoad } from './load.js';
import type { BenchOptions } from './options.js';
import type { Scenario } from './scenarios.js';
import { log, monotonicUs, round2 } from './stats.js';
import type { PreparedStore } from './stores.js';
import { startApi, stop, type ServerCommand } from './targets.js';


export interface ProfileSummary {
  /** False when no sample fell in the window (clocks disagree): then every sample counted. */
  windowed: boolean;
  busyMs: number;
  idleMs: number;
  /** Self time: where the CPU was when sampled. */
  top: { fn: string; where: string; selfMs: number; pct: number }[];
  /** Inclusive time of library and project frames (node core left out): which stage costs what. */
  inclusive: { fn: string; where: string; totalMs: number; pct: number }[];
  byArea: { area: string; selfMs: number; pct: number }[];
}

export type ListPetsProfile = ProfileSummary & { rps: number; p50: number; p99: number; startup: ProfileSummary & { ms: number } };

interface Frame {
  fn: string;
  where: string;
  area: string;
}

function areaOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  if (url.startsWith('node:')) return 'node core';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  return 'project code';
}

/** Microseconds per function (self and inclusive) and per area, summed over the samples. */
class Tally {
  readonly self = new Map<string, { fn: string; where: string; us: number }>();
  readonly total = new Map<string, { fn: string; where: string; us: number }>();
  readonly areas = new Map<string, number>();
  busy = 0;
  idle = 0;

  static add(map: Map<string, { fn: string; where: string; us: number }>, f: Frame, us: number): void {
    const key = `${f.fn} ${f.where}`;
    const entry = map.get(key) ?? { fn: f.fn, where: f.where, us: 0 };
    entry.us += us;
    map.set(key, entry);
  }
}

/** A sample of `us` at node `id`: self time to its frame, inclusive time once to each library or project frame above it. */
function countSample(tally: Tally, id: number, us: number, frame: (id: number) => Frame, parent: Map<number, number>): void {
  const f = frame(id);
  tally.busy += us;
  Tally.add(tally.self, f, us);
  tally.areas.set(f.area, (tally.areas.get(f.area) ?? 0) + us);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const g = frame(cur);
    if (!g.where || g.area === 'node core' || seen.has(`${g.fn} ${g.where}`)) continue;
    seen.add(`${g.fn} ${g.where}`);
    Tally.add(tally.total, g, us);
  }
}

function ranked(tally: Tally): Omit<ProfileSummary, 'windowed'> {
  const pct = (us: number) => round2((100 * us) / Math.max(1, tally.busy));
  const byUs = <T extends { us: number }>(a: T, b: T) => b.us - a.us;
  return {
    busyMs: Math.round(tally.busy / 1000),
    idleMs: Math.round(tally.idle / 1000),
    top: [...tally.self.values()].sort(byUs).slice(0, 20).map((e) => ({ fn: e.fn, where: e.where, selfMs: Math.round(e.us / 1000), pct: pct(e.us) })),
    inclusive: [...tally.total.values()].sort(byUs).slice(0, 30).map((e) => ({ fn: e.fn, where: e.where, totalMs: Math.round(e.us / 1000), pct: pct(e.us) })),
    byArea: [...tally.areas.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
      .map(([area, us]) => ({ area, selfMs: Math.round(us / 1000), pct: pct(us) })),
  };
}

/** Self and inclusive time per function and self time per package, for the samples inside `window` (µs). */
export function summariseProfile(profile: CpuProfile, window: { from: number; to: number }): ProfileSummary {
  const { byId, parent } = callTree(profile);
  const frame = (id: number): Frame => {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const local = url.replace(/^file:\/\//, '').replace(`${projectRoot}/`, '');
    return { fn: functionName || '(anonymous)', where: url ? `${local}:${lineNumber + 1}` : '', area: areaOf(local, functionName) };
  };
  // Leave out start-up and shutdown: on Linux both clocks are CLOCK_MONOTONIC. When none falls
  // in the window (the clocks disagree), every sample counts.
  const windowed = !samplesIn(profile, window).next().done;
  const tally = new Tally();
  for (const { id, us } of samplesIn(profile, windowed ? window : { from: -Infinity, to: Infinity })) {
    const node = byId.get(id);
    if (!node) continue;
    if (node.callFrame.functionName === '(idle)') tally.idle += us;
    else countSample(tally, id, us, frame, parent);
  }
  return { windowed, ...ranked(tally) };
}

/**
 * Profiles a fresh server on `store` through its start-up and one run of `scenario`; writes the
 * raw profile to bench/listPets.cpuprofile. Undefined (with a note) when no profile was written.
 */
export async function profileListPets(store: PreparedStore, scenario: Scenario, command: ServerCommand, opts: BenchOptions, dir: string, notes: string[]): Promise<ListPetsProfile | undefined> {
  const profDir = join(dir, 'cpu-prof');
  mkdirSync(profDir);
  const startup = { from: monotonicUs(), to: 0 };
  const server = await startApi(store, 'server (cpu profile)', command, opts, ['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
  startup.to = monotonicUs();
  const r = await runLoad(scenario.request(server.origin, store.key), scenario.expected, server.pid, opts);
  await stop(server, 15_000);
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) {
    notes.push('--profile: the server wrote no .cpuprofile (did it exit cleanly?).');
    return undefined;
  }
  const raw = readFileSync(join(profDir, file), 'utf8');
  const parsed = JSON.parse(raw) as CpuProfile;
  const profile = { ...summariseProfile(parsed, r.window), rps: r.rps, p50: r.p50, p99: r.p99, startup: { ...summariseProfile(parsed, startup), ms: Math.round(server.startMs) } };
  if (!profile.windowed) notes.push('--profile: the profile clock did not match; its numbers include start-up and shutdown.');
  mkdirSync(join(projectRoot, 'bench'), { recursive: true });
  writeFileSync(join(projectRoot, 'bench', 'listPets.cpuprofile'), raw);
  log(`CPU profile written to bench/listPets.cpuprofile (open it in Chrome DevTools; ${r.rps} req/s while profiling)`);
  return profile;
}
