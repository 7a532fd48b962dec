/**
 * `npx tsx bench/stages.ts [--no-postgres] [--detail] [--duration s] [--pets n] [--connections n]`: where a request's time
 * goes, in µs per request per stage, for listPets limit=20, getPet and createPet on SQLite and
 * (with DATABASE_URL) PostgreSQL. One server per store runs from source (so each frame keeps
 * its file) under `node --cpu-prof`; each scenario is one autocannon run, and the samples of
 * its measured window are split by stage and divided by the responses in that window.
 *
 * Stages are assigned by ./stageProfile.ts; `--detail` adds the functions where the samples fell.
 * The sums are the main thread's only (GC helper threads are not sampled), and V8's profiler
 * samples wall time: a stage that makes a system call (the response's write) also carries the
 * time the thread then waited for a core, so a sampled total can exceed the measured CPU that
 * is printed beside it. The profiler itself costs some 10–20 %.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cleanup, cleanupNow, dropDatabases, makeTempDir } from './cleanup.js';
import { runLoad } from './load.js';
import type { BenchOptions } from './options.js';
import { buildScenarios, type Scenario } from './scenarios.js';
import type { CpuProfile } from './cpuProfile.js';
import { stagesOf } from './stageProfile.js';
import { log, round2 } from './stats.js';
import { preparePostgresStore, prepareSqliteStore, type PreparedStore } from './stores.js';
import { serverCommand, startApi, stop } from './targets.js';

interface ScenarioStages {
  target: string;
  scenario: string;
  rps: number;
  requests: number;
  /** Whole-process CPU per response (all threads), from /proc, under the profiler. */
  processUsPerRequest: number;
  mainThreadUsPerRequest: number;
  stages: { stage: string; usPerRequest: number }[];
  /** The functions where the samples fell (self time), with their stage. */
  top: { frame: string; usPerRequest: number }[];
}

const NAMES = ['listPets limit=20', 'getPet (ids across store)', 'createPet'];

async function profileStore(store: PreparedStore, target: string, opts: BenchOptions, dir: string): Promise<ScenarioStages[]> {
  const profDir = join(dir, `cpu-prof-${target}`);
  mkdirSync(profDir);
  const command = await serverCommand({ ...opts, tsx: true }, []);
  const server = await startApi(store, `server (${target}, cpu profile)`, command, opts, ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--cpu-prof-interval=250']);
  const scenarios = buildScenarios('unused', opts.pets, false).filter((s) => NAMES.includes(s.name));
  const runs: { scenario: Scenario; r: Awaited<ReturnType<typeof runLoad>> }[] = [];
  for (const scenario of scenarios) {
    const r = await runLoad(scenario.request(server.origin, store.key), scenario.expected, server.pid, opts);
    log(`${target} ${scenario.name}: ${r.rps} req/s under the profiler, ${r.cpu.serverUsPerRequest} µs CPU/req (main thread ${r.cpu.serverMainUsPerRequest})`);
    runs.push({ scenario, r });
  }
  await stop(server, 15_000);
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`${target}: the server wrote no .cpuprofile`);
  const profile = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as CpuProfile;
  rmSync(profDir, { recursive: true, force: true });
  return runs.map(({ scenario, r }) => {
    const { stages, leaves } = stagesOf(profile, r.window);
    const per = (us: number) => round2(us / Math.max(1, r.total));
    return {
      target,
      scenario: scenario.name,
      rps: r.rps,
      requests: r.total,
      processUsPerRequest: r.cpu.serverUsPerRequest,
      mainThreadUsPerRequest: r.cpu.serverMainUsPerRequest,
      stages: [...stages.entries()].sort((a, b) => b[1] - a[1]).map(([stage, us]) => ({ stage, usPerRequest: per(us) })),
      top: [...leaves.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([frame, us]) => ({ frame, usPerRequest: per(us) })),
    };
  });
}

function print(results: ScenarioStages[]): void {
  for (const s of results) {
    const sampled = round2(s.stages.reduce((sum, x) => sum + x.usPerRequest, 0));
    console.log(`\n### ${s.target}: ${s.scenario} — ${s.rps} req/s under the profiler; ${s.processUsPerRequest} µs CPU/req (main thread ${s.mainThreadUsPerRequest}; sampled on it: ${sampled})\n`);
    console.log('| stage | µs/req | % |\n| --- | ---: | ---: |');
    for (const x of s.stages) console.log(`| ${x.stage} | ${x.usPerRequest} | ${Math.round((100 * x.usPerRequest) / Math.max(sampled, 1e-9))} |`);
    if (detail) {
      console.log('\n| stage: function (self) | µs/req |\n| --- | ---: |');
      for (const x of s.top) console.log(`| ${x.frame} | ${x.usPerRequest} |`);
    }
  }
}

const { values } = parseArgs({
  options: { 'no-postgres': { type: 'boolean', default: false }, detail: { type: 'boolean', default: false }, duration: { type: 'string' }, pets: { type: 'string' }, connections: { type: 'string' } },
  strict: true,
});
const databaseUrl = process.env.DATABASE_URL || undefined;
const detail = values.detail;
const opts: BenchOptions = {
  duration: Number(values.duration ?? 3),
  warmup: 1,
  connections: Number(values.connections ?? 50),
  rounds: 1,
  pets: Number(values.pets ?? 10_000),
  smallPets: 1000,
  big: 0,
  coldStarts: 0,
  samples: 0,
  postgres: databaseUrl !== undefined && !values['no-postgres'],
  build: false,
  tsx: true,
  serverNodeArgs: [],
  profile: true,
  floors: false,
  out: '',
};
process.on('exit', cleanupNow);
try {
  const dir = makeTempDir();
  const results = await profileStore(await prepareSqliteStore(dir, 'stages', opts.pets, 'kysely'), 'sqlite', opts, dir);
  if (opts.postgres && databaseUrl) results.push(...(await profileStore(await preparePostgresStore(databaseUrl, opts.pets), 'postgres', opts, dir)));
  await dropDatabases();
  print(results);
} finally {
  await cleanup();
}
process.exit(0);
