/** `npm run bench` flags: the help text, and the options a run reads (written to the results file as they are). */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from '../src/shared/paths.js';
import { LOAD_GENERATORS, type LoadGenerator } from './load.js';
import { wrkInstalled } from './wrk.js';

export const HELP = `Usage: npm run bench -- [flags]

Starts, as child processes, on fresh stores of --pets animals: a bare node:http ceiling (the
server's own first page after a bearer check), our production server (dist/, built by
\`npm run -s build\` when older than its sources; NODE_ENV=production, LOG_LEVEL=silent), the
Fastify peer (bench/peer.ts: Fastify + fastify-openapi-glue from the same spec, plain
better-sqlite3, on its own copy of the SQLite store) and the two floor servers
(bench/floorServer.ts: our key check, handlers and store without a router, then with
openapi-backend); on PostgreSQL too (database animal_store_bench_<random>, dropped afterwards)
when DATABASE_URL is set, where our server also runs with DATABASE_PREPARED_STATEMENTS=off,
directly and through a PgBouncer in transaction mode it starts (when /usr/sbin/pgbouncer is
installed; issue 41's goal: ≥ 0.8× the direct connection's req/s).

Then --rounds interleaved rounds: per scenario, every target that answers it, one load run each
of --connections connections: a warm-up of --warmup s, then --duration s measured. The load
comes from wrk (Debian's package: apt-get install wrk; one thread, a warm-up run of its own, then
the measured run) when it is installed, from autocannon (in this process, the warm-up on the same
connections until every one has had a response) otherwise; --load-generator picks one, and the
report says which ran. Scenarios: listPets limit=20 and 100, listPets status=sold with a deep
cursor, getPet over ids across the store and at one id, a 401, a 400 (limit=0), createPet,
GET /healthz (SQLite); and, where the bundled contract has them (1.3.0; otherwise skipped with a
note), putPetPhoto with a 1 MiB PNG, getPetPhoto of a 1 MiB PNG (stored before the rounds) and
createPet as multipart/form-data with a 64 KiB photo (bench/photos.ts). The peer runs listPets
limit=20, both getPets, createPet and the upload scenarios (@fastify/multipart, a raw-body parser
for image/*); the floors listPets limit=20 and both getPets; the server with webhooks on (one
endpoint, the bench's receiver; --no-webhooks skips it) createPet, after each run waiting until
its events have arrived. For the uploads prefer wrk:
autocannon, in this process, reads 1 MiB answers slower than the servers send them. Also: cold start (spawn to the first 200 of the API), RSS
after load, listPets latency on a 1,000-pet store against a --big one.

Prints a markdown table (medians across rounds of req/s, p50/p99, server CPU µs per request,
× baseline and × peer: ratios of the same round), the machine's other load, and a verdict per
goal of issue 31 (reported, never enforced): getPet (both) and listPets ≥ 1.2× peer, createPet ≥ 3×
peer, openapi-backend's layer ≤ 10 µs of CPU per getPet (floor + openapi-backend minus the floor
without router), PostgreSQL reads ≥ 0.9× their no-router floor, RSS after load ≤ 120 MiB, cold
start ≤ 400 ms; and the webhooks issue's: createPet with webhooks on ≥ 0.8× without a subscriber, every
event delivered. Writes every figure to --out (not committed). Children, temp files and the
PostgreSQL database are removed on exit, error or Ctrl-C.

Flags:
  --duration <s>      measured seconds per scenario per round (default 4; 2.5 when PostgreSQL also
                      runs; wrk rounds both this and --warmup up to whole seconds)
  --warmup <s>        seconds at the start of each run not counted, on the same connections (default 1)
  --connections <n>   concurrent connections (default 50)
  --rounds <n>        interleaved rounds; medians are reported (default 3)
  --pets <n>          animals in the load-test stores (default 10000)
  --big <n>           animals in the large store of the 1k-vs-big latency test (default 1000000)
  --cold-starts <n>   cold starts to time (default 5)
  --samples <n>       sequential requests per position and round in the 1k-vs-big test (default 500)
  --quick             smoke run: --duration 2 --warmup 0.5 --rounds 1 --big 100000 --cold-starts 3
                      --samples 300 (explicit flags still win)
  --load-generator <wrk|autocannon>
                      what sends the load (default wrk when it is installed, else autocannon)
  --no-postgres       skip PostgreSQL even when DATABASE_URL is set
  --no-build          do not build dist/ first, even when it is older than its sources; use it as it is
  --tsx               run the server from source (node --import tsx src/main.ts) instead of dist/
  --server-node-args="<flags>"
                      extra node flags for the server, floor and peer processes, to try a setting,
                      e.g. --server-node-args="--max-semi-space-size=8" (note the =)
  --no-floors         skip the floor servers (and the verdicts that need them)
  --no-peer           skip the Fastify peer (and the verdicts that need it)
  --no-webhooks       skip the servers with webhooks on (bench/webhooks.ts: per store, our server
                      on a store of its own with one endpoint subscribed, a node:http receiver in
                      the bench answering 204; createPet beside the plain server's in the same
                      rounds, deliveries/s, emit → receiver p50/p99, every event counted)
  --against <dir>     also run another checkout's production server (<dir>/dist/, built there
                      first: npm run build) on the same SQLite store, in the same rounds, as
                      "sqlite before": an A/B of two versions (a redesign is no slower), with the
                      server's CPU per request and the ratio of the same round
  --out <file>        where to write the JSON results (default bench/results/latest.json, git-ignored)
  -h, --help          this text

Total runtime with the defaults on a 2-core machine: about 4 minutes for SQLite only, about
6 minutes with PostgreSQL (the default duration drops to 2.5 s then).`;

/** Key order is the results file's `options` order. */
export interface BenchOptions {
  duration: number;
  warmup: number;
  connections: number;
  rounds: number;
  pets: number;
  smallPets: number;
  big: number;
  coldStarts: number;
  samples: number;
  postgres: boolean;
  build: boolean;
  tsx: boolean;
  serverNodeArgs: string[];
  /** Also run the floor servers (bench/floorServer.ts): the store and contract without our HTTP layers, then with openapi-backend. */
  floors: boolean;
  /** Also run the Fastify peer (bench/peer.ts) on SQLite. */
  peer: boolean;
  /** Also run our server with webhooks on and one endpoint (bench/webhooks.ts), per store. */
  webhooks: boolean;
  /** Another checkout whose dist/ also runs on the SQLite store ("sqlite before"): an A/B in the same rounds. */
  against: string | undefined;
  out: string;
  loadGenerator: LoadGenerator;
}

export type ParsedCommandLine =
  | { kind: 'help' }
  /** A usage error: the message to print before the help text. */
  | { kind: 'error'; message: string }
  /** `databaseUrl` is kept out of the options, so that no credential reaches the results file. */
  | { kind: 'run'; options: BenchOptions; databaseUrl: string | undefined };

class UsageError extends Error {}

function numberFlag(value: string | undefined, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) throw new UsageError(`--${name} must be a number ≥ ${min}; got "${value}"`);
  return n;
}

function loadGenerator(value: string | undefined): LoadGenerator {
  if (value === undefined) return wrkInstalled() ? 'wrk' : 'autocannon';
  const known = LOAD_GENERATORS.find((name) => name === value);
  if (!known) throw new UsageError(`--load-generator must be one of ${LOAD_GENERATORS.join(', ')}; got "${value}"`);
  if (known === 'wrk' && !wrkInstalled()) throw new UsageError('--load-generator wrk: wrk is not installed (apt-get install wrk)');
  return known;
}

const FLAGS = {
  duration: { type: 'string' },
  warmup: { type: 'string' },
  connections: { type: 'string' },
  rounds: { type: 'string' },
  pets: { type: 'string' },
  big: { type: 'string' },
  'cold-starts': { type: 'string' },
  samples: { type: 'string' },
  quick: { type: 'boolean', default: false },
  'no-postgres': { type: 'boolean', default: false },
  'no-build': { type: 'boolean', default: false },
  tsx: { type: 'boolean', default: false },
  'server-node-args': { type: 'string' },
  'no-floors': { type: 'boolean', default: false },
  'no-peer': { type: 'boolean', default: false },
  'no-webhooks': { type: 'boolean', default: false },
  against: { type: 'string' },
  out: { type: 'string' },
  'load-generator': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export function parseCommandLine(args: readonly string[], env: NodeJS.ProcessEnv): ParsedCommandLine {
  try {
    const { values: flags } = parseArgs({ args: [...args], options: FLAGS, strict: true, allowPositionals: false });
    if (flags.help) return { kind: 'help' };
    const databaseUrl = env.DATABASE_URL || undefined;
    const postgres = databaseUrl !== undefined && !flags['no-postgres'];
    const quick = flags.quick;
    const count = (name: 'connections' | 'rounds' | 'pets' | 'big' | 'cold-starts' | 'samples', fallback: number, min: number) =>
      Math.round(numberFlag(flags[name], name, fallback, min));
    const options: BenchOptions = {
      duration: numberFlag(flags.duration, 'duration', quick ? 2 : postgres ? 2.5 : 4, 0.5),
      warmup: numberFlag(flags.warmup, 'warmup', quick ? 0.5 : 1, 0),
      connections: count('connections', 50, 1),
      rounds: count('rounds', quick ? 1 : 3, 1),
      pets: count('pets', 10_000, 200),
      smallPets: 1000,
      big: count('big', quick ? 100_000 : 1_000_000, 1000),
      coldStarts: count('cold-starts', quick ? 3 : 5, 1),
      samples: count('samples', quick ? 300 : 500, 10),
      postgres,
      build: !flags['no-build'] && !flags.tsx,
      tsx: flags.tsx,
      serverNodeArgs: (flags['server-node-args'] ?? '').split(/\s+/).filter(Boolean),
      floors: !flags['no-floors'],
      peer: !flags['no-peer'],
      webhooks: !flags['no-webhooks'],
      against: flags.against,
      out: flags.out ?? join(projectRoot, 'bench', 'results', 'latest.json'),
      loadGenerator: loadGenerator(flags['load-generator']),
    };
    return { kind: 'run', options, databaseUrl };
  } catch (error) {
    // parseArgs throws TypeErrors with a code for unknown or malformed flags; anything else is a bug.
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error)) return { kind: 'error', message: error.message };
    throw error;
  }
}
