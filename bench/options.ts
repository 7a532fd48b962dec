/** `npm run bench` flags: the help text, and the options a run reads (written to results.json as they are). */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from '../src/paths.js';

export const HELP = `Usage: npm run bench -- [flags]

Starts, as child processes, a bare node:http baseline (answering GET /v1/pets?limit=20 with the
server's own first page, after a bearer check) and the production server (dist/, built by
\`npm run -s build\` when older than its sources; NODE_ENV=production, LOG_LEVEL=silent) on a
fresh SQLite store seeded with --pets animals, plus the same server on a fresh PostgreSQL
database (animal_store_bench_<random>, dropped afterwards) when DATABASE_URL is set.

Then --rounds interleaved rounds (baseline, SQLite server, PostgreSQL server; again), each
scenario one autocannon run of --connections connections: a warm-up of --warmup s that also
lasts until every connection has had a response, then --duration s measured. Scenarios:
listPets limit=20 and 100, listPets status=sold with a deep cursor (30 'next' links in), getPet
over ids across the store, a 401 (bad key), a 400 (limit=0), createPet; plus GET /healthz (the
server's floor: no key, no store; SQLite only) as a diagnostic. Reported: medians across rounds
of req/s, p50/p99/max latency, the ratio to the baseline of the same round, the server's CPU
time per request, and how busy the machine was with other work. Also: cold start (spawn to the
first 200 of the API, GET /v1/pets?limit=1 with a key), RSS after load, and listPets latency on a
1,000-pet store vs a --big store (one connection, sequential).

Prints markdown tables, then each budget of issue 11 as met or missed with its measured ratio or
figure (never enforced), then the per-request cost of metrics (bench/metricsCost.ts) and of rate
limiting (bench/rateLimitCost.ts), measured in process; writes bench/results.json. Children, temp
files and the PostgreSQL database are removed on exit, error or Ctrl-C. Where a request's time
goes: \`npx tsx bench/stages.ts\` (µs per request per stage, each store) and \`npx tsx bench/pgcost.ts\`
(node-postgres's client CPU per query, layer by layer).

Flags:
  --duration <s>      measured seconds per scenario per round (default 4; 2.5 when PostgreSQL also runs)
  --warmup <s>        seconds at the start of each run not counted, on the same connections (default 1)
  --connections <n>   concurrent connections (default 50)
  --rounds <n>        interleaved rounds; medians are reported (default 3)
  --pets <n>          animals in the load-test stores (default 10000)
  --big <n>           animals in the large store of the 1k-vs-big latency test (default 1000000)
  --cold-starts <n>   cold starts to time (default 5)
  --samples <n>       sequential requests per position and round in the 1k-vs-big test (default 500)
  --quick             smoke run: --duration 2 --warmup 0.5 --rounds 1 --big 100000 --cold-starts 3
                      --samples 300 (explicit flags still win)
  --no-postgres       skip PostgreSQL even when DATABASE_URL is set
  --no-build          do not build dist/ first, even when it is older than its sources; use it as it is
  --tsx               run the server from source (node --import tsx src/main.ts) instead of dist/
  --server-node-args="<flags>"
                      extra node flags for the server processes only, to try a setting, e.g.
                      --server-node-args="--max-semi-space-size=8" (note the =)
  --profile           also CPU-profile one more server process (node --cpu-prof): its start-up
                      and one listPets limit=20 run; prints where the time goes and writes
                      bench/listPets.cpuprofile (open it in Chrome DevTools)
  --no-floors         skip the floor servers (bench/floorServer.ts): node:http with our key check,
                      handlers, store and the contract's headers, without a router and then with
                      openapi-backend, run on listPets limit=20 and getPet next to the server
  --out <file>        where to write the JSON results (default bench/results.json)
  -h, --help          this text

Total runtime with the defaults on a 2-core machine: about 3 minutes for SQLite only, about
4 minutes with PostgreSQL (the default duration drops to 2.5 s then).`;

/** Key order is results.json's `options` order. */
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
  profile: boolean;
  /** Also run the floor servers (bench/floorServer.ts): the store and contract without our HTTP layers, then with openapi-backend. */
  floors: boolean;
  out: string;
}

export type ParsedCommandLine =
  | { kind: 'help' }
  /** A usage error: the message to print before the help text. */
  | { kind: 'error'; message: string }
  /** `databaseUrl` is kept out of the options, so that no credential reaches results.json. */
  | { kind: 'run'; options: BenchOptions; databaseUrl: string | undefined };

class UsageError extends Error {}

function numberFlag(value: string | undefined, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) throw new UsageError(`--${name} must be a number ≥ ${min}; got "${value}"`);
  return n;
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
  profile: { type: 'boolean', default: false },
  'no-floors': { type: 'boolean', default: false },
  out: { type: 'string' },
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
      profile: flags.profile,
      floors: !flags['no-floors'],
      out: flags.out ?? join(projectRoot, 'bench', 'results.json'),
    };
    return { kind: 'run', options, databaseUrl };
  } catch (error) {
    // parseArgs throws TypeErrors with a code for unknown or malformed flags; anything else is a bug.
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error)) return { kind: 'error', message: error.message };
    throw error;
  }
}
