/**
 * `npm run bench:profile`: where a server's CPU goes under load. One server (ours as `npm start`
 * runs it, the Fastify peer, or a floor server) on a fresh SQLite store, with V8's CPU profiler and
 * --trace-gc on, under wrk (one thread, 50 connections) on one path; then its main thread's time
 * per request by where the code lives and by function, and its garbage collections per 10,000
 * requests. `npm run bench` says how fast; this says why.
 */
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from '../src/shared/paths.js';
import { cleanup, cleanupNow, makeTempDir } from './cleanup.js';
import { summariseProfile, type Share } from './cpuProfile.js';
import { parseCommandLine } from './options.js';
import { prepareSqliteStore } from './stores.js';
import { auth, serverCommand, startApi, startFloor, startPeer, stop, type ApiServer } from './targets.js';
import { runWrk, wrkInstalled } from './wrk.js';

const TARGETS = ['ours', 'peer', 'floor', 'floor-openapi-backend'] as const;
type Target = (typeof TARGETS)[number];

const HELP = `Usage: npm run bench:profile -- [--target ${TARGETS.join('|')}] [--path /v1/pets/1] [--duration 8] [--pets 10000]

Starts one server on a fresh SQLite store of --pets animals with node's --cpu-prof and --trace-gc,
sends it GET --path (with the store's API key) from wrk for --duration seconds, stops it, and
prints its main thread's CPU per request by place (our files through the bundle's source maps,
packages, Node internals, native code, GC) and by function, and its collections per 10,000
requests. The profile is kept as bench/results/<target>.cpuprofile (git-ignored) for Chrome
DevTools or speedscope. Needs wrk (apt-get install wrk).`;

interface Gc {
  scavenges: number;
  markCompacts: number;
  pauseMs: number;
  /** Young-generation garbage collected by the scavenges: about what the requests allocated. */
  scavengedMiB: number;
}

/** --trace-gc lines: `… Scavenge 9.8 (11.5) -> 1.9 (11.5) MB, 0.42 / 0.00 ms …`. */
function readGc(output: string): Gc {
  const gc: Gc = { scavenges: 0, markCompacts: 0, pauseMs: 0, scavengedMiB: 0 };
  for (const line of output.split('\n')) {
    const m = /\b(Scavenge|Mark-Compact|Mark-sweep)\b[^\d]*([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, (?:pooled: [\d.]+ MB, )?([\d.]+)/.exec(line);
    if (!m) continue;
    if (m[1] === 'Scavenge') {
      gc.scavenges++;
      gc.scavengedMiB += Number(m[2]) - Number(m[3]);
    } else gc.markCompacts++;
    gc.pauseMs += Number(m[4]);
  }
  return gc;
}

const row = (s: Share) => `| ${s.what} | ${s.usPerRequest} | ${s.pct} |`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { target: { type: 'string', default: 'ours' }, path: { type: 'string', default: '/v1/pets/1' }, duration: { type: 'string', default: '8' }, pets: { type: 'string', default: '10000' }, help: { type: 'boolean', short: 'h', default: false } },
  });
  if (values.help) return console.log(HELP);
  const target = TARGETS.find((t) => t === values.target);
  if (!target) throw new Error(`--target must be one of ${TARGETS.join(', ')}\n\n${HELP}`);
  if (!wrkInstalled()) throw new Error('wrk is not installed: apt-get install wrk');
  const dir = makeTempDir();
  const profiles = join(dir, 'profile');
  mkdirSync(profiles);
  const parsed = parseCommandLine([`--server-node-args=--cpu-prof --cpu-prof-dir=${profiles} --cpu-prof-interval=100 --trace-gc`], process.env);
  if (parsed.kind !== 'run') throw new Error('bench options');
  const opts = parsed.options;
  const command = await serverCommand(opts, []);
  const store = await prepareSqliteStore(dir, 'profile', Number(values.pets), 'kysely');
  const start: Record<Target, () => Promise<ApiServer>> = {
    ours: () => startApi(store, 'server', command, opts),
    peer: () => startPeer(store, opts),
    floor: () => startFloor(store, 'none', opts),
    'floor-openapi-backend': () => startFloor(store, 'openapi-backend', opts),
  };
  const server = await start[target]();
  // No separate warm-up: the profile spans the process's life, so every request it served is counted.
  const load = await runWrk({ url: `${server.origin}${values.path}`, headers: auth(store.key) }, 200, server.pid, { connections: 50, warmup: 0, duration: Number(values.duration) });
  await stop(server, 30_000);
  const file = readdirSync(profiles).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error(`the server wrote no profile:\n${server.proc.output().slice(-2000)}`);
  const requests = load.total + 2; // and the start-up probes
  const summary = summariseProfile(join(profiles, file), requests);
  const gc = readGc(server.proc.output());
  const kept = join(projectRoot, 'bench', 'results', `${target}.cpuprofile`);
  mkdirSync(join(projectRoot, 'bench', 'results'), { recursive: true });
  copyFileSync(join(profiles, file), kept);
  const per10k = (n: number) => Math.round((n * 10_000 * 100) / requests) / 100;
  console.log(
    [
      `## CPU profile: ${target}, GET ${values.path}, wrk -t1 -c50 -d${values.duration}s`,
      '',
      `${load.total} requests, ${load.rps} req/s (unexpected statuses ${load.unexpected}); server CPU ${load.cpu.serverUsPerRequest} µs per request (main thread ${load.cpu.serverMainUsPerRequest}), of which the profiler saw ${summary.busyUsPerRequest} µs busy on the main thread (sampled every 100 µs, so the profiler's own cost is in it).`,
      `Per 10,000 requests: ${per10k(gc.scavenges)} scavenges, ${per10k(gc.markCompacts)} mark-compacts, ${per10k(gc.pauseMs)} ms of GC pauses, about ${per10k(gc.scavengedMiB)} MiB allocated (young garbage collected), i.e. ${Math.round((gc.scavengedMiB * 2 ** 20) / requests)} bytes per request.`,
      '',
      '| where | µs/request | % of busy |',
      '| --- | ---: | ---: |',
      ...summary.byPlace.map(row),
      '',
      '| function | µs/request | % of busy |',
      '| --- | ---: | ---: |',
      ...summary.byFunction.map(row),
      '',
      `Profile: ${kept} (open it in Chrome DevTools or speedscope).`,
    ].join('\n'),
  );
}

process.on('exit', cleanupNow);
main().then(
  async () => {
    await cleanup();
    process.exit(0);
  },
  async (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    await cleanup();
    process.exit(1);
  },
);
