/**
 * `npm run bench`: load-tests the production server against a bare `node:http` ceiling in the
 * same run, and reports the numbers against our performance budgets (never fails on a miss).
 *
 * Every server is a child process, so none shares the load generator's event loop. The load
 * generator is autocannon (programmatic API) in this process. See `--help` for the flags.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { createCursorCodec } from '../src/cursor.js';
import { projectRoot } from '../src/paths.js';
import { createApiKeyStore } from '../src/store/apiKeys.js';
import { openPostgres, openSqlite, redactUrl, type DatabaseHandle } from '../src/store/database.js';
import type { Database } from '../src/store/schema.js';
import { readSecret } from '../src/store/secrets.js';

// ---------------------------------------------------------------------------------------------
// Flags

const HELP = `Usage: npm run bench -- [flags]

Starts, as child processes, a bare node:http baseline (answering GET /v1/pets?limit=20 with the
server's own first page, after a bearer check) and the production server (dist/ after
\`npm run -s build\`, NODE_ENV=production, LOG_LEVEL=silent) on a fresh SQLite store seeded with
--pets animals, plus the same server on a fresh PostgreSQL database (animal_store_bench_<random>,
dropped afterwards) when DATABASE_URL is set.

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

Prints markdown tables and writes bench/results.json. Budgets are reported as pass/miss, never
enforced. Children, temp files and the PostgreSQL database are removed on exit, error or Ctrl-C.

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
  --no-build          do not run \`npm run -s build\` first; use dist/ as it is
  --tsx               run the server from source (node --import tsx src/main.ts) instead of dist/
  --server-node-args="<flags>"
                      extra node flags for the server processes only, to try a setting, e.g.
                      --server-node-args="--max-semi-space-size=8" (note the =)
  --profile           also CPU-profile one more server process (node --cpu-prof): its start-up
                      and one listPets limit=20 run; prints where the time goes and writes
                      bench/listPets.cpuprofile (open it in Chrome DevTools)
  --out <file>        where to write the JSON results (default bench/results.json)
  -h, --help          this text

Total runtime with the defaults on a 2-core machine: about 3 minutes for SQLite only, about
4 minutes with PostgreSQL (the default duration drops to 3 s then).`;

function numberFlag(value: string | undefined, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) {
    console.error(`--${name} must be a number ≥ ${min}; got "${value}"\n\n${HELP}`);
    process.exit(2);
  }
  return n;
}

const { values: flags } = (() => {
  try {
    return parseArgs({
      options: {
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
        out: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${HELP}`);
    process.exit(2);
  }
})();
if (flags.help) {
  console.log(HELP);
  process.exit(0);
}

const databaseUrl = process.env.DATABASE_URL || undefined;
const withPostgres = databaseUrl !== undefined && !flags['no-postgres'];
const quick = flags.quick;
const opts = {
  duration: numberFlag(flags.duration, 'duration', quick ? 2 : withPostgres ? 2.5 : 4, 0.5),
  warmup: numberFlag(flags.warmup, 'warmup', quick ? 0.5 : 1, 0),
  connections: Math.round(numberFlag(flags.connections, 'connections', 50, 1)),
  rounds: Math.round(numberFlag(flags.rounds, 'rounds', quick ? 1 : 3, 1)),
  pets: Math.round(numberFlag(flags.pets, 'pets', 10_000, 200)),
  smallPets: 1000,
  big: Math.round(numberFlag(flags.big, 'big', quick ? 100_000 : 1_000_000, 1000)),
  coldStarts: Math.round(numberFlag(flags['cold-starts'], 'cold-starts', quick ? 3 : 5, 1)),
  samples: Math.round(numberFlag(flags.samples, 'samples', quick ? 300 : 500, 10)),
  postgres: withPostgres,
  build: !flags['no-build'] && !flags.tsx,
  tsx: flags.tsx,
  serverNodeArgs: (flags['server-node-args'] ?? '').split(/\s+/).filter(Boolean),
  profile: flags.profile,
  out: flags.out ?? join(projectRoot, 'bench', 'results.json'),
};

// ---------------------------------------------------------------------------------------------
// autocannon (CommonJS, no bundled types): the slice of its API this script uses.

interface AcRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: AcRequest, context: Record<string, unknown>) => AcRequest;
}
interface AcOptions {
  url: string;
  connections: number;
  duration: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  requests?: AcRequest[];
  timeout?: number;
  /** Milliseconds between autocannon's samples; also how often it checks for stop(). */
  sampleInt?: number;
}
interface AcResult {
  duration: number;
  errors: number;
  timeouts: number;
  resets: number;
  requests: { total: number; average: number; sent: number };
  statusCodeStats: Record<string, { count: number }>;
  throughput: { average: number };
}
type AcInstance = EventEmitter & PromiseLike<AcResult> & { stop(): void };
const autocannon = createRequire(import.meta.url)('autocannon') as (options: AcOptions) => AcInstance;

// ---------------------------------------------------------------------------------------------
// Children, temp dirs and databases: all cleaned up on exit, error, SIGINT and SIGTERM.

interface Child {
  label: string;
  process: ChildProcess;
  pid: number;
  /** The last few KB of its stdout and stderr, for error messages. */
  output(): string;
  exited: Promise<number | null>;
}

const children = new Set<Child>();
const tempDirs = new Set<string>();
const pgDatabases = new Set<string>();

function spawnChild(label: string, args: string[], env: NodeJS.ProcessEnv): Child {
  const proc = spawn(process.execPath, args, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (proc.pid === undefined) throw new Error(`could not spawn ${label}`);
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-4096);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const child: Child = {
    label,
    process: proc,
    pid: proc.pid,
    output: () => tail,
    exited: new Promise((resolve) => proc.once('exit', (code) => resolve(code))),
  };
  children.add(child);
  void child.exited.then(() => children.delete(child));
  return child;
}

async function stopChild(child: Child, graceMs = 5000): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}

function makeTempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-bench-'));
  tempDirs.add(dir);
  return dir;
}

async function dropPgDatabase(name: string): Promise<void> {
  if (!databaseUrl) return;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
  pgDatabases.delete(name);
}

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  return (cleaning ??= (async () => {
    await Promise.all([...children].map((c) => stopChild(c, 3000)));
    for (const name of [...pgDatabases]) {
      await dropPgDatabase(name).catch((error: unknown) => console.error(`could not drop database ${name}: ${String(error)}`));
    }
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
    tempDirs.clear();
  })());
}

let interrupted = false;
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: stopping children and removing temp files…`);
    void cleanup().finally(() => process.exit(code));
  });
}
// Last resort for an abrupt exit: nothing asynchronous runs here.
process.on('exit', () => {
  for (const c of children) c.process.kill('SIGKILL');
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// Small helpers

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const log = (message: string) => console.error(`[bench ${((performance.now() - runStarted) / 1000).toFixed(1).padStart(5)}s] ${message}`);
const runStarted = performance.now();

function median(values: number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const round3 = (n: number) => Math.round(n * 1000) / 1000;

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function httpGet(url: string, headers: Record<string, string> = {}, agent: http.Agent | false = false): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${url} timed out`)));
  });
}

/**
 * Resolves with the milliseconds from `since` to the first 200 on `url`: /healthz while the
 * baseline starts, the first page of the API (key check, validation, a database read) for ours.
 */
async function waitFor200(child: Child, url: string, since: number, headers: Record<string, string> = {}, timeoutMs = 20_000): Promise<number> {
  let exited = false;
  void child.exited.then(() => (exited = true));
  for (;;) {
    if (exited) throw new Error(`${child.label} exited before it answered:\n${child.output()}`);
    if (performance.now() - since > timeoutMs) throw new Error(`${child.label} gave no 200 on ${url} within ${timeoutMs} ms:\n${child.output()}`);
    try {
      const reply = await httpGet(url, headers);
      if (reply.status === 200) return performance.now() - since;
    } catch {
      // Not listening yet.
    }
    await sleep(2);
  }
}

interface Memory {
  rssMiB: number;
  /** Peak RSS. */
  hwmMiB: number;
  /** Of the RSS: heap, stacks, native allocations … */
  anonMiB: number;
  /** … and mapped files (the node binary, shared libraries, better-sqlite3's addon). */
  fileMiB: number;
}

function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mib = (field: string) => round2(Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024);
  return { rssMiB: mib('VmRSS'), hwmMiB: mib('VmHWM'), anonMiB: mib('RssAnon'), fileMiB: mib('RssFile') };
}

// CPU accounting from /proc, so that every run says what the server cost per request and how
// busy the machine was with work that is not ours (other people's tests share these 2 cores).

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** This process and those that started it (tsx, npm, the shell): all idle, but ours. */
const ancestors = (() => {
  const pids = [process.pid];
  for (let pid = process.ppid; pid > 1 && pids.length < 10; ) {
    pids.push(pid);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
  }
  return pids;
})();

interface CpuSnapshot {
  at: number;
  /** Busy jiffies of the whole machine charged to processes (user, nice, system, steal) … */
  busy: number;
  /** … and those of interrupts (irq, softirq: much of loopback TCP), charged to none. */
  kernel: number;
  procs: Map<number, { ticks: number; comm: string }>;
  /** CPU jiffies of the main thread of the process asked for. */
  mainThread: number;
}

function threadTicks(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(rest[11]) + Number(rest[12]);
  } catch {
    return 0;
  }
}

function cpuSnapshot(mainThreadOf?: number): CpuSnapshot {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const f = (i: number) => fields[i] ?? 0;
  const procs = new Map<number, { ticks: number; comm: string }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const rest = stat.slice(close + 2).split(' ');
      procs.set(Number(entry), { ticks: Number(rest[11]) + Number(rest[12]), comm: stat.slice(stat.indexOf('(') + 1, close) });
    } catch {
      // Gone in the meantime.
    }
  }
  return { at: performance.now(), busy: f(0) + f(1) + f(2) + f(7), kernel: f(5) + f(6), procs, mainThread: threadTicks(mainThreadOf) };
}

interface CpuUse {
  /** CPU time of the server under test, per response, in µs … */
  serverUsPerRequest: number;
  /** … and of its main thread alone. */
  serverMainUsPerRequest: number;
  /** Shares of the machine's capacity (all cores) during the run, in %. */
  serverPct: number;
  /** This process (autocannon) and its other children. */
  benchPct: number;
  /** PostgreSQL's processes. */
  databasePct: number;
  /** Interrupt handling (irq, softirq), mostly our own loopback traffic. */
  kernelPct: number;
  /** Everything else: other people's work on this machine. */
  otherPct: number;
  /** The busiest of those other processes, e.g. `node 38%`. */
  otherTop: string;
}

function cpuUse(before: CpuSnapshot, after: CpuSnapshot, serverPid: number | undefined, requests: number): CpuUse {
  const delta = (pid: number) => {
    const a = after.procs.get(pid);
    if (!a) return 0;
    return a.ticks - (before.procs.get(pid)?.ticks ?? 0);
  };
  const ours = new Set([...ancestors, ...[...children].map((c) => c.pid)]);
  let server = 0;
  let bench = 0;
  let database = 0;
  const others: { comm: string; ticks: number }[] = [];
  for (const [pid, { comm }] of after.procs) {
    if (pid === serverPid) server += delta(pid);
    else if (ours.has(pid)) bench += delta(pid);
    else if (comm === 'postgres') database += delta(pid);
    else if (delta(pid) > 0) others.push({ comm, ticks: delta(pid) });
  }
  const capacity = ((after.at - before.at) / 1000) * CLK_TCK * cpus().length;
  const pct = (ticks: number) => round2((100 * ticks) / capacity);
  return {
    serverUsPerRequest: Math.round(((server / CLK_TCK) * 1e6) / Math.max(1, requests)),
    serverMainUsPerRequest: Math.round((((after.mainThread - before.mainThread) / CLK_TCK) * 1e6) / Math.max(1, requests)),
    serverPct: pct(server),
    benchPct: pct(bench),
    databasePct: pct(database),
    kernelPct: pct(after.kernel - before.kernel),
    otherPct: pct(Math.max(0, after.busy - before.busy - server - bench - database)),
    otherTop: others
      .sort((a, b) => b.ticks - a.ticks)
      .filter((o) => pct(o.ticks) >= 1)
      .slice(0, 3)
      .map((o) => `${o.comm} ${Math.round(pct(o.ticks))}%`)
      .join(', '),
  };
}

// ---------------------------------------------------------------------------------------------
// Stores

const NAMES = ['Biscuit', 'Luna', 'Max', 'Bella', 'Charlie', 'Daisy', 'Milo', 'Coco', 'Rocky', 'Nala', 'Oscar', 'Willow', 'Pepper', 'Ziggy', 'Hazel', 'Gizmo', 'Maple', 'Rusty', 'Clover', 'Mochi'];
const STATUSES = ['available', 'pending', 'sold'] as const;
const EPOCH_MS = Date.UTC(2024, 0, 1);

/** The i-th seeded animal (1-based, so its id on a fresh store). The SQL seeder below matches it. */
function seedRow(i: number): { name: string; category_id: number; status: (typeof STATUSES)[number]; created_at: string } {
  return { name: `${NAMES[i % NAMES.length]!} ${i}`, category_id: 1 + (i % 5), status: STATUSES[i % 3]!, created_at: new Date(EPOCH_MS + i * 1000).toISOString() };
}

/** Multi-row inserts through Kysely in one transaction: the same path on SQLite and PostgreSQL. */
async function seedThroughKysely(db: Kysely<Database>, count: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (let start = 1; start <= count; start += 1000) {
      const rows = [];
      for (let i = start; i < Math.min(start + 1000, count + 1); i++) rows.push(seedRow(i));
      await trx.insertInto('pets').values(rows).execute();
    }
  });
}

/** One INSERT … SELECT over a recursive CTE, in SQLite itself: a million rows in seconds. */
function seedThroughSqlite(path: string, count: number): void {
  const sqlite = new SQLite(path);
  try {
    sqlite.pragma('synchronous = OFF');
    sqlite
      .prepare(
        `with recursive seq(x) as (select 1 union all select x + 1 from seq where x < ?)
         insert into pets (name, category_id, status, created_at)
         select json_extract(?, '$[' || (x % ${NAMES.length}) || ']') || ' ' || x,
                1 + x % 5,
                case x % 3 when 0 then 'available' when 1 then 'pending' else 'sold' end,
                strftime('%Y-%m-%dT%H:%M:%fZ', ${EPOCH_MS / 1000} + x, 'unixepoch')
         from seq`,
      )
      .run(count, JSON.stringify(NAMES));
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    sqlite.close();
  }
}

interface PreparedStore {
  target: 'sqlite' | 'postgres';
  /** Environment for the server child. */
  env: Record<string, string>;
  key: string;
  secret: string;
  location: string;
}

async function finishStore(handle: DatabaseHandle, target: PreparedStore['target'], env: Record<string, string>): Promise<PreparedStore> {
  try {
    const { key } = await createApiKeyStore(handle.db).create('bench');
    const secret = await readSecret(handle.db, 'cursor');
    return { target, env, key, secret, location: handle.location };
  } finally {
    await handle.close();
  }
}

async function prepareSqliteStore(dir: string, name: string, count: number, how: 'kysely' | 'sql'): Promise<PreparedStore> {
  const path = join(dir, `${name}.sqlite`);
  const handle = await openSqlite(path); // runs the migrations
  if (how === 'kysely') await seedThroughKysely(handle.db, count);
  const store = await finishStore(handle, 'sqlite', { SQLITE_PATH: path, DATABASE_URL: '' });
  if (how === 'sql') seedThroughSqlite(path, count);
  return store;
}

async function preparePostgresStore(count: number): Promise<PreparedStore> {
  if (!databaseUrl) throw new Error('DATABASE_URL is not set');
  const name = `animal_store_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
    pgDatabases.add(name);
  } finally {
    await admin.end();
  }
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  const handle = await openPostgres({ connection: url.toString() });
  await seedThroughKysely(handle.db, count);
  const store = await finishStore(handle, 'postgres', { DATABASE_URL: url.toString() });
  store.location = `${redactUrl(url.toString())} (database ${name})`;
  return store;
}

// ---------------------------------------------------------------------------------------------
// Servers

/**
 * What `npm start` runs after building, read from package.json, so the benchmark measures the
 * production command with its node flags (e.g. `node --max-semi-space-size=8 dist/server/server.mjs`).
 */
function startCommand(): string[] {
  const start = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start ?? '';
  const run = start.split('&&').at(-1)?.trim().split(/\s+/) ?? [];
  if (run[0] !== 'node' || run.length < 2) throw new Error(`package.json scripts.start does not end with \`node … <file>\`: ${start}`);
  return run.slice(1);
}
const productionArgs = startCommand();
let serverArgs = productionArgs;

interface ApiServer {
  child: Child;
  origin: string;
  store: PreparedStore;
  /** Spawn to the first 200 on GET /v1/pets?limit=1. */
  startMs: number;
}

async function startApi(store: PreparedStore, label: string, extraNodeArgs: string[] = []): Promise<ApiServer> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    VALIDATE_RESPONSES: 'false',
    HOST: '127.0.0.1',
    PORT: String(port),
    ...store.env,
  };
  const origin = `http://127.0.0.1:${port}`;
  const since = performance.now();
  const child = spawnChild(label, [...opts.serverNodeArgs, ...extraNodeArgs, ...serverArgs], env);
  const startMs = await waitFor200(child, `${origin}/v1/pets?limit=1`, since, { Authorization: `Bearer ${store.key}` });
  return { child, origin, store, startMs };
}

const BASELINE_SOURCE = String.raw`
const http = require('node:http');
const body = Buffer.from(process.env.BENCH_BODY, 'utf8');
const expected = 'Bearer ' + process.env.BENCH_KEY;
const denied = Buffer.from('{"status":401,"code":"unauthorized","message":"A valid API key is required."}');
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"ok"}');
  } else if (req.method !== 'GET' || req.url !== '/v1/pets?limit=20') {
    res.writeHead(404, { 'content-length': '0' });
    res.end();
  } else if (req.headers.authorization !== expected) {
    // Like the server: a bad key closes the connection, so no body is ever read after it.
    res.writeHead(401, { 'content-type': 'application/json', 'content-length': denied.length, connection: 'close' });
    res.end(denied);
  } else {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  }
});
server.keepAliveTimeout = 5000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => { server.close(() => process.exit(0)); server.closeAllConnections(); });
// Never outlive the benchmark, even if it is killed without a chance to clean up.
const parent = Number(process.env.BENCH_PARENT);
setInterval(() => { if (process.ppid !== parent) process.exit(0); }, 1000).unref();
`;

async function startBaseline(body: string, key: string): Promise<{ child: Child; origin: string }> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const since = performance.now();
  const child = spawnChild('baseline', ['-e', BASELINE_SOURCE], { ...process.env, PORT: String(port), BENCH_BODY: body, BENCH_KEY: key, BENCH_PARENT: String(process.pid) });
  await waitFor200(child, `${origin}/healthz`, since);
  return { child, origin };
}

// ---------------------------------------------------------------------------------------------
// Load scenarios

interface Scenario {
  name: string;
  expected: number;
  /** A read scenario: held to the p99 budget. */
  read: boolean;
  /**
   * The server closes the connection after each response. autocannon then writes one request
   * into the closing socket that never gets an answer and does not drop it from its queue, so
   * its response times are wrong (they grow with the run); only req/s means something, and the
   * baseline to compare with is one that closes too.
   */
  closes?: boolean;
  options(origin: string, key: string): Omit<AcOptions, 'connections' | 'duration'>;
}

interface RunResult {
  rps: number;
  total: number;
  p50: number;
  p99: number;
  max: number;
  /** Responses with another status than expected. */
  unexpected: number;
  errors: number;
  timeouts: number;
  statuses: Record<string, number>;
  responseBytes: number;
  cpu: CpuUse;
  /** From the start of the run until every connection had had a response. */
  rampMs: number;
  /** The measured part of the run, in µs on the monotonic clock. */
  window: { from: number; to: number };
}

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

function buildScenarios(deepCursor: string, pets: number, withFloor: boolean): Scenario[] {
  let n = 0;
  return [
    // Diagnostic, not in the brief: the server's listener, security headers and request id alone
    // (no key, no validation, no database), to split the cost between HTTP and the rest.
    ...(withFloor ? [{ name: 'GET /healthz (server floor: no key, no store)', expected: 200, read: false, options: (o: string) => ({ url: `${o}/healthz` }) }] : []),
    { name: 'listPets limit=20', expected: 200, read: true, options: (o, k) => ({ url: `${o}/v1/pets?limit=20`, headers: auth(k) }) },
    { name: 'listPets limit=100', expected: 200, read: true, options: (o, k) => ({ url: `${o}/v1/pets?limit=100`, headers: auth(k) }) },
    {
      name: 'listPets status+deep cursor',
      expected: 200,
      read: true,
      options: (o, k) => ({ url: `${o}/v1/pets?status=sold&limit=20&cursor=${encodeURIComponent(deepCursor)}`, headers: auth(k) }),
    },
    {
      name: 'getPet (ids across store)',
      expected: 200,
      read: true,
      options: (o, k) => ({
        url: `${o}/v1/pets/1`,
        headers: auth(k),
        requests: [
          {
            method: 'GET',
            // A stride co-prime with the store size visits every id, scattered across the table.
            setupRequest: (request) => ({ ...request, path: `/v1/pets/${((n++ * 7919) % pets) + 1}` }),
          },
        ],
      }),
    },
    { name: '401 bad key', expected: 401, read: false, closes: true, options: (o) => ({ url: `${o}/v1/pets?limit=20`, headers: auth(BAD_KEY) }) },
    { name: '400 limit=0', expected: 400, read: false, options: (o, k) => ({ url: `${o}/v1/pets?limit=0`, headers: auth(k) }) },
    {
      name: 'createPet',
      expected: 201,
      read: false,
      options: (o, k) => ({
        url: `${o}/v1/pets`,
        method: 'POST',
        headers: { ...auth(k), 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Bench Biscuit', categoryId: 3 }),
      }),
    },
  ];
}

const BAD_KEY = `ask_${'A'.repeat(43)}`;
const BASELINES: Scenario[] = [
  { name: 'listPets limit=20 (constant body)', expected: 200, read: true, options: (o, k) => ({ url: `${o}/v1/pets?limit=20`, headers: auth(k) }) },
  { name: '401 bad key (closes, like the server)', expected: 401, read: false, closes: true, options: (o) => ({ url: `${o}/v1/pets?limit=20`, headers: auth(BAD_KEY) }) },
];

/**
 * One autocannon run over the same connections throughout: a warm-up that lasts `--warmup`
 * seconds and until every connection has had a response, then `--duration` measured seconds.
 * (Opening the connections is left out on purpose: a Node server that is saturated accepts about
 * one new connection per event-loop turn, so with 50 connections the last one waits 50 turns,
 * 1–2 s here, for its first response; measured, that ramp-up would be the p99. `rampMs` keeps it.)
 */
async function runLoad(options: Omit<AcOptions, 'duration' | 'connections'>, expected: number, serverPid: number | undefined): Promise<RunResult> {
  const MAX_RAMP_S = 5;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const seen = new Set<unknown>();
  let errors = 0;
  let phase: 'warmup' | 'measuring' | 'done' = 'warmup';
  let before: CpuSnapshot | undefined;
  let rampMs = Number.NaN;
  const started = performance.now();
  const window = { from: 0, to: 0 };
  const instance = autocannon({ ...options, connections: opts.connections, duration: opts.warmup + MAX_RAMP_S + opts.duration + 5, sampleInt: 100 });
  let stopTimer: NodeJS.Timeout | undefined;
  const finished = new Promise<void>((resolve) => {
    const begin = () => {
      if (phase !== 'warmup') return;
      phase = 'measuring';
      before = cpuSnapshot(serverPid);
      window.from = monotonicUs();
      stopTimer = setTimeout(() => {
        window.to = monotonicUs();
        phase = 'done';
        instance.stop();
        resolve();
      }, opts.duration * 1000);
    };
    // Never wait for the ramp-up forever: a connection that gets no answer must not stall the run.
    const forced = setTimeout(begin, (opts.warmup + MAX_RAMP_S) * 1000);
    instance.on('response', (client: unknown, status: number, _bytes: number, responseTime: number) => {
      if (phase === 'warmup') {
        seen.add(client);
        if (seen.size >= opts.connections && Number.isNaN(rampMs)) rampMs = Math.round(performance.now() - started);
        if (seen.size >= opts.connections && performance.now() - started >= opts.warmup * 1000) {
          clearTimeout(forced);
          begin();
        }
        return;
      }
      if (phase !== 'measuring') return;
      // autocannon's own histogram has 1 ms resolution and spans the warm-up: keep every response time.
      latencies.push(responseTime);
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
    instance.on('reqError', () => {
      if (phase === 'measuring') errors++;
    });
    void Promise.resolve(instance).then(() => {
      clearTimeout(forced);
      resolve();
    });
  });
  await finished;
  const after = cpuSnapshot(serverPid);
  const result = await instance;
  clearTimeout(stopTimer);
  if (window.to === 0) window.to = monotonicUs();
  const seconds = (window.to - window.from) / 1e6;
  const total = latencies.length;
  const cpu = cpuUse(before ?? after, after, serverPid, total);
  const sorted = Float64Array.from(latencies).sort();
  let unexpected = 0;
  for (const [code, count] of Object.entries(statuses)) if (Number(code) !== expected) unexpected += count;
  await sleep(200); // let closed sockets settle between runs
  return {
    rps: Math.round(total / Math.max(seconds, 1e-3)),
    total,
    p50: round2(percentile(sorted, 50)),
    p99: round2(percentile(sorted, 99)),
    max: round2(sorted.length ? sorted[sorted.length - 1]! : Number.NaN),
    unexpected,
    errors,
    timeouts: result.timeouts,
    statuses,
    responseBytes: Math.round(result.throughput.average / Math.max(1, result.requests.average)),
    cpu,
    rampMs,
    window,
  };
}

function measure(scenario: Scenario, origin: string, key: string, serverPid: number): Promise<RunResult> {
  return runLoad(scenario.options(origin, key), scenario.expected, serverPid);
}

// ---------------------------------------------------------------------------------------------
// Paging helpers

function nextLink(link: string | undefined): string | undefined {
  return link ? /<([^>]+)>;\s*rel="next"/.exec(link)?.[1] : undefined;
}

/** Follows `next` links from `/v1/pets?status=sold&limit=100`, as a client would, to a deep cursor. */
async function deepCursor(origin: string, key: string, hops: number): Promise<{ cursor: string; hops: number; afterId: number | undefined }> {
  let path: string | undefined = '/v1/pets?status=sold&limit=100';
  let cursor: string | undefined;
  let done = 0;
  while (path && done < hops) {
    const reply = await httpGet(`${origin}${path}`, auth(key));
    if (reply.status !== 200) throw new Error(`GET ${path} answered ${reply.status}: ${reply.body}`);
    const next = nextLink(reply.headers.link as string | undefined);
    if (!next) break;
    cursor = new URL(next, origin).searchParams.get('cursor') ?? undefined;
    path = next;
    done++;
  }
  if (!cursor) throw new Error('the store gave no next link: too few pets to page through');
  return { cursor, hops: done, afterId: peekAfterId(cursor) };
}

/** Reads the position out of a cursor, for the report only (cursors are opaque to clients). */
function peekAfterId(cursor: string): number | undefined {
  try {
    const payload = JSON.parse(Buffer.from(cursor.split('.')[0] ?? '', 'base64url').toString('utf8')) as { a?: unknown };
    return typeof payload.a === 'number' ? payload.a : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Latency on a small vs a big store: one keep-alive connection, sequential requests.

async function sequentialLatencies(origin: string, path: string, key: string, count: number): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = process.hrtime.bigint();
      const reply = await httpGet(`${origin}${path}`, auth(key), agent);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (reply.status !== 200) throw new Error(`GET ${path} answered ${reply.status}: ${reply.body}`);
      times.push(ms);
    }
    return times.sort((a, b) => a - b);
  } finally {
    agent.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// CPU profile summary

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  /** Microseconds on the monotonic clock that process.hrtime also reads. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Microseconds on the monotonic clock, comparable with a V8 CPU profile's timestamps. */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

interface ProfileSummary {
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

function areaOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  if (url.startsWith('node:')) return 'node core';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  return 'project code';
}

/** Self and inclusive time per function and self time per package, for the samples inside `window` (µs). */
function summariseProfile(profile: CpuProfile, window: { from: number; to: number }): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const frame = (id: number) => {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const local = url.replace(/^file:\/\//, '').replace(`${projectRoot}/`, '');
    return { fn: functionName || '(anonymous)', where: url ? `${local}:${lineNumber + 1}` : '', area: areaOf(local, functionName) };
  };
  const self = new Map<string, { fn: string; where: string; us: number }>();
  const total = new Map<string, { fn: string; where: string; us: number }>();
  const areas = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  // Leave out start-up and shutdown: on Linux both clocks are CLOCK_MONOTONIC.
  let at = profile.startTime;
  const stamps = profile.timeDeltas.map((d) => (at += d));
  const windowed = stamps.some((t) => t >= window.from && t <= window.to);
  for (let i = 0; i < profile.samples.length; i++) {
    if (windowed && (stamps[i]! < window.from || stamps[i]! > window.to)) continue;
    const id = profile.samples[i]!;
    const node = byId.get(id);
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (!node) continue;
    if (node.callFrame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    busy += us;
    const f = frame(id);
    const key = `${f.fn} ${f.where}`;
    const entry = self.get(key) ?? { fn: f.fn, where: f.where, us: 0 };
    entry.us += us;
    self.set(key, entry);
    areas.set(f.area, (areas.get(f.area) ?? 0) + us);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const g = frame(cur);
      if (!g.where || g.area === 'node core') continue;
      const k = `${g.fn} ${g.where}`;
      if (seen.has(k)) continue;
      seen.add(k);
      const e = total.get(k) ?? { fn: g.fn, where: g.where, us: 0 };
      e.us += us;
      total.set(k, e);
    }
  }
  const pct = (us: number) => round2((100 * us) / Math.max(1, busy));
  return {
    windowed,
    busyMs: Math.round(busy / 1000),
    idleMs: Math.round(idle / 1000),
    top: [...self.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, 20)
      .map((e) => ({ fn: e.fn, where: e.where, selfMs: Math.round(e.us / 1000), pct: pct(e.us) })),
    inclusive: [...total.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, 30)
      .map((e) => ({ fn: e.fn, where: e.where, totalMs: Math.round(e.us / 1000), pct: pct(e.us) })),
    byArea: [...areas.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
      .map(([area, us]) => ({ area, selfMs: Math.round(us / 1000), pct: pct(us) })),
  };
}

// ---------------------------------------------------------------------------------------------
// Report

function table(header: string[], rows: (string | number)[][]): string {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? (Number.isNaN(c) ? '–' : String(c)) : c)));
  return [`| ${header.join(' | ')} |`, `| ${header.map((h, i) => (i === 0 ? '---' : /^(req|×|p50|p99|max|unexp|err|ms|MiB|ratio|value|run|µs|other|self|%|incl)/.test(h) ? '---:' : '---')).join(' | ')} |`, ...cells.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

interface ScenarioSummary {
  target: string;
  scenario: string;
  expected: number;
  read: boolean;
  rps: number;
  ratioToBaseline: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** connections ÷ req/s: the mean response time by Little's law, right even where autocannon's timing is not. */
  littleMeanMs: number;
  /** Median time until every connection had had a first response (left out of the measurement). */
  rampMs: number;
  /** autocannon's response times are not meaningful for this scenario (see Scenario.closes). */
  latencyInvalid: boolean;
  unexpected: number;
  errors: number;
  /** Server CPU per response (median of rounds): the cost, whatever else the machine is doing. */
  serverUsPerRequest: number;
  /** Of which on the main thread (the event loop); the rest is V8's GC helpers and libuv. */
  serverMainUsPerRequest: number;
  /** The highest share of the machine taken by work not ours during any round, in %. */
  otherLoadPct: number;
  perRound: (RunResult & { baselineRps: number })[];
}

function summarise(target: string, scenario: Scenario, runs: (RunResult & { baselineRps: number })[]): ScenarioSummary {
  return {
    target,
    scenario: scenario.name,
    expected: scenario.expected,
    read: scenario.read,
    rps: Math.round(median(runs.map((r) => r.rps))),
    ratioToBaseline: round2(median(runs.map((r) => r.rps / r.baselineRps))),
    p50Ms: round2(median(runs.map((r) => r.p50))),
    p99Ms: round2(median(runs.map((r) => r.p99))),
    maxMs: round2(Math.max(...runs.map((r) => r.max))),
    littleMeanMs: round2((1000 * opts.connections) / median(runs.map((r) => r.rps))),
    latencyInvalid: scenario.closes === true,
    rampMs: Math.round(median(runs.map((r) => r.rampMs))),
    unexpected: runs.reduce((s, r) => s + r.unexpected, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
    serverUsPerRequest: Math.round(median(runs.map((r) => r.cpu.serverUsPerRequest))),
    serverMainUsPerRequest: Math.round(median(runs.map((r) => r.cpu.serverMainUsPerRequest))),
    otherLoadPct: round2(Math.max(...runs.map((r) => r.cpu.otherPct))),
    perRound: runs,
  };
}

// ---------------------------------------------------------------------------------------------
// The run

async function main(): Promise<void> {
  const notes: string[] = [];
  log(`options: ${JSON.stringify(opts)}`);

  // 1. The server build.
  let serverCommand = ['node', ...productionArgs].join(' ');
  if (opts.tsx) {
    serverArgs = ['--import', 'tsx', 'src/main.ts'];
    serverCommand = 'node --import tsx src/main.ts';
  } else if (opts.build) {
    log('npm run -s build');
    try {
      execFileSync('npm', ['run', '-s', 'build'], { cwd: projectRoot, stdio: ['ignore', 'inherit', 'inherit'] });
    } catch {
      serverArgs = ['--import', 'tsx', 'src/main.ts'];
      serverCommand = 'node --import tsx src/main.ts';
      notes.push('`npm run -s build` failed: the server ran from source through tsx.');
      log('build failed: running the server from source through tsx instead');
    }
  }
  const entry = serverArgs.at(-1) ?? '';
  if (serverArgs === productionArgs && !existsSync(join(projectRoot, entry))) {
    throw new Error(`${entry} is missing: run without --no-build, or with --tsx`);
  }

  // 2. Stores.
  const dir = makeTempDir();
  let t = performance.now();
  const sqliteStore = await prepareSqliteStore(dir, 'load', opts.pets, 'kysely');
  const seedSqliteMs = Math.round(performance.now() - t);
  log(`seeded ${opts.pets} pets into SQLite in ${seedSqliteMs} ms`);
  let pgStore: PreparedStore | undefined;
  let seedPgMs: number | undefined;
  if (opts.postgres) {
    t = performance.now();
    pgStore = await preparePostgresStore(opts.pets);
    seedPgMs = Math.round(performance.now() - t);
    log(`seeded ${opts.pets} pets into PostgreSQL ${pgStore.location} in ${seedPgMs} ms`);
  } else if (databaseUrl) {
    notes.push('DATABASE_URL is set but --no-postgres skipped PostgreSQL.');
  } else {
    notes.push('DATABASE_URL is not set: PostgreSQL scenarios skipped.');
  }

  // 3. Cold start, with nothing else running.
  const coldStarts: number[] = [];
  for (let i = 0; i < opts.coldStarts; i++) {
    const server = await startApi(sqliteStore, `cold start ${i + 1}`);
    coldStarts.push(round2(server.startMs));
    await stopChild(server.child);
  }
  log(`cold start (ms): ${coldStarts.join(', ')}`);

  // 4. Servers for the load rounds.
  const targets: { name: string; server: ApiServer; scenarios: Scenario[]; deep: { hops: number; afterId: number | undefined } }[] = [];
  const sqliteServer = await startApi(sqliteStore, 'server (sqlite)');
  const firstPage = await httpGet(`${sqliteServer.origin}/v1/pets?limit=20`, auth(sqliteStore.key));
  if (firstPage.status !== 200) throw new Error(`listPets answered ${firstPage.status}: ${firstPage.body}`);
  const page = JSON.parse(firstPage.body) as unknown[];
  const stores = [
    { name: 'sqlite', store: sqliteStore, server: sqliteServer },
    ...(pgStore ? [{ name: 'postgres', store: pgStore, server: await startApi(pgStore, 'server (postgres)') }] : []),
  ];
  for (const s of stores) {
    const deep = await deepCursor(s.server.origin, s.store.key, 30);
    log(`${s.name}: deep cursor after ${deep.hops} next links (after id ${deep.afterId ?? '?'})`);
    targets.push({ name: s.name, server: s.server, scenarios: buildScenarios(deep.cursor, opts.pets, s.name === 'sqlite'), deep: { hops: deep.hops, afterId: deep.afterId } });
  }

  // The ceiling: the same bytes as our first page, from a bare node:http server.
  const baselineBody = JSON.stringify(page);
  const baseline = await startBaseline(baselineBody, sqliteStore.key);
  const check = await httpGet(`${baseline.origin}/v1/pets?limit=20`, auth(sqliteStore.key));
  if (check.status !== 200 || check.body !== firstPage.body) throw new Error('the baseline does not answer with the server’s first page');
  log(`baseline body: ${Buffer.byteLength(baselineBody)} bytes, ${page.length} pets (the server's first page is ${Buffer.byteLength(firstPage.body)} bytes)`);

  // 5. Interleaved rounds.
  const runs = new Map<string, (RunResult & { baselineRps: number })[]>();
  const record = (target: string, scenario: Scenario, r: RunResult & { baselineRps: number }) => {
    const key = `${target}\u0000${scenario.name}`;
    runs.set(key, [...(runs.get(key) ?? []), r]);
  };
  const perRoundSeconds = (BASELINES.length + targets.reduce((s, tg) => s + tg.scenarios.length, 0)) * (opts.duration + opts.warmup + 0.2);
  log(`${opts.rounds} round(s) of ~${Math.round(perRoundSeconds)} s each`);
  const describe = (r: RunResult, closes: boolean | undefined) =>
    `${r.rps} req/s, ${closes ? 'latency n/a (connection closes)' : `p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms`}, ramp-up ${r.rampMs} ms, ${r.cpu.serverUsPerRequest} µs CPU/req (main thread ${r.cpu.serverMainUsPerRequest}), other load ${r.cpu.otherPct}%${r.cpu.otherTop ? ` (${r.cpu.otherTop})` : ''}` +
    (r.unexpected || r.errors ? `; unexpected ${r.unexpected}, errors ${r.errors}: ${JSON.stringify(r.statuses)}` : '');
  for (let round = 1; round <= opts.rounds; round++) {
    // The ceiling first, then every server, so that drift over the run hits all of them.
    const ceiling: number[] = [];
    for (const scenario of BASELINES) {
      const b = await measure(scenario, baseline.origin, sqliteStore.key, baseline.child.pid);
      ceiling.push(b.rps);
      record('baseline', scenario, { ...b, baselineRps: b.rps });
      log(`round ${round} baseline ${scenario.name}: ${describe(b, scenario.closes)}`);
    }
    for (const tg of targets) {
      for (const scenario of tg.scenarios) {
        const r = await measure(scenario, tg.server.origin, tg.server.store.key, tg.server.child.pid);
        const baselineRps = (scenario.closes ? ceiling[1] : ceiling[0]) ?? Number.NaN;
        record(tg.name, scenario, { ...r, baselineRps });
        log(`round ${round} ${tg.name} ${scenario.name}: ${describe(r, scenario.closes)}, ${round2(r.rps / baselineRps)}× baseline`);
      }
    }
  }

  // 6. Memory after load.
  const memory: Record<string, Memory> = {};
  for (const tg of targets) memory[tg.name] = memoryOf(tg.server.child.pid);
  memory.baseline = memoryOf(baseline.child.pid);
  log(`RSS after load: ${Object.entries(memory).map(([k, v]) => `${k} ${v.rssMiB} MiB (peak ${v.hwmMiB})`).join(', ')}`);

  // 7. Optional CPU profile of one listPets limit=20 run.
  let profile: (ProfileSummary & { rps: number; p50: number; p99: number; startup: ProfileSummary & { ms: number } }) | undefined;
  if (opts.profile) {
    await stopChild(sqliteServer.child);
    const profDir = join(dir, 'cpu-prof');
    mkdirSync(profDir);
    const startup = { from: monotonicUs(), to: 0 };
    const server = await startApi(sqliteStore, 'server (cpu profile)', ['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
    startup.to = monotonicUs();
    const scenario = targets[0]!.scenarios.find((x) => x.name === 'listPets limit=20')!;
    const r = await measure(scenario, server.origin, sqliteStore.key, server.child.pid);
    const window = r.window;
    await stopChild(server.child, 15_000);
    const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
    if (file) {
      const raw = readFileSync(join(profDir, file), 'utf8');
      const parsed = JSON.parse(raw) as CpuProfile;
      profile = {
        ...summariseProfile(parsed, window),
        rps: r.rps,
        p50: r.p50,
        p99: r.p99,
        startup: { ...summariseProfile(parsed, startup), ms: Math.round(server.startMs) },
      };
      if (!profile.windowed) notes.push('--profile: the profile clock did not match; its numbers include start-up and shutdown.');
      mkdirSync(join(projectRoot, 'bench'), { recursive: true });
      writeFileSync(join(projectRoot, 'bench', 'listPets.cpuprofile'), raw);
      log(`CPU profile written to bench/listPets.cpuprofile (open it in Chrome DevTools; ${r.rps} req/s while profiling)`);
    } else {
      notes.push('--profile: the server wrote no .cpuprofile (did it exit cleanly?).');
    }
  }

  await Promise.all([...targets.map((tg) => stopChild(tg.server.child)), stopChild(baseline.child)]);
  if (pgStore) {
    for (const name of [...pgDatabases]) await dropPgDatabase(name);
  }

  // 8. listPets latency: small store vs big store.
  t = performance.now();
  const smallStore = await prepareSqliteStore(dir, 'small', opts.smallPets, 'sql');
  const bigStore = await prepareSqliteStore(dir, 'big', opts.big, 'sql');
  const seedBigMs = Math.round(performance.now() - t);
  log(`seeded ${opts.smallPets} and ${opts.big} pets in ${seedBigMs} ms`);
  const small = await startApi(smallStore, 'server (small store)');
  const big = await startApi(bigStore, 'server (big store)');
  const positions = (store: PreparedStore, count: number) => {
    const codec = createCursorCodec(store.secret);
    const deepId = Math.floor(count * 0.9);
    return [
      { name: 'first page', path: '/v1/pets?limit=20' },
      { name: 'deep cursor (90%)', path: `/v1/pets?limit=20&cursor=${codec.encode({ afterId: deepId })}` },
      { name: 'status=sold + deep cursor (90%)', path: `/v1/pets?status=sold&limit=20&cursor=${codec.encode({ afterId: deepId, status: 'sold' })}` },
    ];
  };
  const smallPaths = positions(smallStore, opts.smallPets);
  const bigPaths = positions(bigStore, opts.big);
  const scale: { position: string; small: { p50: number[]; p99: number[] }; big: { p50: number[]; p99: number[] } }[] = smallPaths.map((p) => ({ position: p.name, small: { p50: [], p99: [] }, big: { p50: [], p99: [] } }));
  const warm = Math.max(50, Math.round(opts.samples / 5));
  for (let i = 0; i < smallPaths.length; i++) {
    await sequentialLatencies(small.origin, smallPaths[i]!.path, smallStore.key, warm);
    await sequentialLatencies(big.origin, bigPaths[i]!.path, bigStore.key, warm);
  }
  for (let round = 0; round < Math.max(3, opts.rounds); round++) {
    for (let i = 0; i < smallPaths.length; i++) {
      // Alternate which store goes first, so drift does not favour one.
      const order = round % 2 === 0 ? (['small', 'big'] as const) : (['big', 'small'] as const);
      for (const which of order) {
        const server = which === 'small' ? small : big;
        const path = which === 'small' ? smallPaths[i]!.path : bigPaths[i]!.path;
        const times = await sequentialLatencies(server.origin, path, server.store.key, opts.samples);
        scale[i]![which].p50.push(percentile(times, 50));
        scale[i]![which].p99.push(percentile(times, 99));
      }
    }
  }
  await Promise.all([stopChild(small.child), stopChild(big.child)]);
  const scaleRows = scale.map((s) => {
    const smallP50 = median(s.small.p50);
    const bigP50 = median(s.big.p50);
    return {
      position: s.position,
      smallP50Ms: round3(smallP50),
      bigP50Ms: round3(bigP50),
      smallP99Ms: round3(median(s.small.p99)),
      bigP99Ms: round3(median(s.big.p99)),
      ratio: round2(bigP50 / smallP50),
    };
  });

  // 9. Budgets.
  const summaries: ScenarioSummary[] = [];
  for (const scenario of BASELINES) summaries.push(summarise('baseline', scenario, runs.get(`baseline\u0000${scenario.name}`) ?? []));
  for (const tg of targets) {
    for (const scenario of tg.scenarios) summaries.push(summarise(tg.name, scenario, runs.get(`${tg.name}\u0000${scenario.name}`) ?? []));
  }
  const find = (target: string, name: string) => summaries.find((s) => s.target === target && s.scenario === name);
  const budgets: { budget: string; target: string; value: string; measured: number; limit: number; pass: boolean }[] = [];
  /** `measured` must stay at or below `limit`, or at or above it when `atLeast`. */
  const budget = (name: string, target: string, value: string, measured: number, limit: number, atLeast = false) =>
    budgets.push({ budget: name, target, value, measured, limit, pass: atLeast ? measured >= limit : measured <= limit });
  for (const tg of targets) {
    const list = find(tg.name, 'listPets limit=20');
    if (list) budget('listPets limit=20 ≥ 0.30× baseline req/s', tg.name, `${list.ratioToBaseline}×`, list.ratioToBaseline, 0.3, true);
    for (const s of summaries.filter((x) => x.target === tg.name && x.read)) {
      budget(`p99 ≤ 10 ms at ${opts.connections} connections: ${s.scenario}`, tg.name, `${s.p99Ms} ms`, s.p99Ms, 10);
    }
    const create = find(tg.name, 'createPet');
    const get = find(tg.name, 'getPet (ids across store)');
    if (create && get) {
      const ratio = round2(create.rps / get.rps);
      budget('createPet ≥ 0.5× getPet req/s', tg.name, `${ratio}× (${create.rps} vs ${get.rps})`, ratio, 0.5, true);
    }
    const mem = memory[tg.name];
    if (mem) budget('RSS after load ≤ 120 MiB', tg.name, `${mem.rssMiB} MiB`, mem.rssMiB, 120);
  }
  const coldMedian = round2(median(coldStarts));
  budget('cold start ≤ 400 ms (median)', 'sqlite', `${coldMedian} ms`, coldMedian, 400);
  for (const row of scaleRows) {
    budget(`listPets p50 at ${opts.big.toLocaleString('en')} ≤ 1.2× at ${opts.smallPets.toLocaleString('en')}: ${row.position}`, 'sqlite', `${row.ratio}×`, row.ratio, 1.2);
  }

  const runtimeSeconds = round2((performance.now() - runStarted) / 1000);

  // 10. Report.
  const report = [
    `## Animal Store API benchmark — ${new Date().toISOString()}`,
    '',
    `Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, server: \`${serverCommand.replace(/^node /, ['node', ...opts.serverNodeArgs, ''].join(' '))}\` (NODE_ENV=production, LOG_LEVEL=silent).`,
    `${opts.pets.toLocaleString('en')} pets per store; ${opts.connections} connections; ${opts.rounds} round(s); per scenario a warm-up of ≥ ${opts.warmup} s (until every connection has had a response) and ${opts.duration} s measured on the same connections; medians across rounds; latency from every response (µs resolution).`,
    `Baseline: bare node:http answering \`GET /v1/pets?limit=20\` with the server's own first page (${Buffer.byteLength(baselineBody)} bytes) after a bearer check.`,
    '',
    table(
      ['target', 'scenario', 'expect', 'req/s', '× baseline', 'p50 ms', 'p99 ms', 'max ms', 'µs CPU/req (main thread)', 'unexpected', 'errors', 'other load %'],
      summaries.map((s) => [
        s.target,
        s.scenario,
        s.expected,
        s.rps,
        s.ratioToBaseline,
        s.latencyInvalid ? `≈${s.littleMeanMs} mean†` : s.p50Ms,
        s.latencyInvalid ? '†' : s.p99Ms,
        s.latencyInvalid ? '†' : s.maxMs,
        `${s.serverUsPerRequest} (${s.serverMainUsPerRequest})`,
        s.unexpected,
        s.errors,
        s.otherLoadPct,
      ]),
    ),
    '',
    `† The server closes the connection after a 401, which autocannon mis-times (it writes a request into the closing socket and never drops it from its queue), so only req/s counts there; the mean shown is connections ÷ req/s (Little's law). The 401 rows compare with a baseline that closes too.`,
    '',
    "`× baseline`: median over rounds of req/s ÷ the baseline's req/s in the same round. `unexpected`: responses with another status than `expect`, summed over rounds. `µs CPU/req`: the server process's CPU time per response from /proc (in brackets: its main thread alone; the rest is GC helper threads). `other load %`: the largest share of the machine (all cores) used during a round by processes that are not this benchmark, its children or PostgreSQL; above ~10 % the numbers of that row are disturbed.",
    '',
    `Cold start (spawn → first 200 on GET /v1/pets?limit=1), ms: ${coldStarts.join(', ')}; median ${coldMedian}.`,
    `RSS after load: ${Object.entries(memory).map(([k, v]) => `${k} ${v.rssMiB} MiB (peak ${v.hwmMiB} MiB; anonymous ${v.anonMiB} MiB, mapped files ${v.fileMiB} MiB)`).join('; ')}.`,
    '',
    `listPets limit=20, one connection, sequential, p50 (p99) in ms — ${opts.smallPets.toLocaleString('en')} vs ${opts.big.toLocaleString('en')} pets (median of ${Math.max(3, opts.rounds)} interleaved batches of ${opts.samples}):`,
    '',
    table(
      ['position', `${opts.smallPets.toLocaleString('en')} pets`, `${opts.big.toLocaleString('en')} pets`, 'ratio'],
      scaleRows.map((r) => [r.position, `${r.smallP50Ms} (${r.smallP99Ms})`, `${r.bigP50Ms} (${r.bigP99Ms})`, `${r.ratio}×`]),
    ),
    '',
    'Budgets (reported, never enforced):',
    '',
    table(
      ['budget', 'target', 'value', 'result'],
      budgets.map((b) => [b.budget, b.target, b.value, b.pass ? 'pass' : '**miss**']),
    ),
  ];
  if (profile) {
    report.push(
      '',
      `CPU profile of the server during ${opts.duration} s of listPets limit=20 after warm-up (${profile.rps} req/s, p50 ${profile.p50} ms, p99 ${profile.p99} ms under the profiler; ${profile.busyMs} ms busy, ${profile.idleMs} ms idle). Self time by area:`,
      '',
      table(['area', 'self ms', '% of busy'], profile.byArea.map((a) => [a.area, a.selfMs, a.pct])),
      '',
      'Top functions by self time:',
      '',
      table(['function', 'where', 'self ms', '% of busy'], profile.top.map((f) => [f.fn, f.where ? `\`${f.where}\`` : '', f.selfMs, f.pct])),
      '',
      'Library and project frames by inclusive time (the stage and everything it calls):',
      '',
      table(['function', 'where', 'incl ms', '% of busy'], profile.inclusive.map((f) => [f.fn, `\`${f.where}\``, f.totalMs, f.pct])),
      '',
      `Start-up of the same process (spawn → first 200 on GET /v1/pets?limit=1: ${profile.startup.ms} ms under the profiler; ${profile.startup.busyMs} ms busy on its main thread). Self time by area:`,
      '',
      table(['area', 'self ms', '% of busy'], profile.startup.byArea.map((a) => [a.area, a.selfMs, a.pct])),
      '',
      'Start-up, library and project frames by inclusive time:',
      '',
      table(['function', 'where', 'incl ms', '% of busy'], profile.startup.inclusive.slice(0, 20).map((f) => [f.fn, `\`${f.where}\``, f.totalMs, f.pct])),
    );
  }
  if (notes.length) report.push('', ...notes.map((n) => `Note: ${n}`));
  report.push('', `Total runtime: ${runtimeSeconds} s.`);
  console.log(report.join('\n'));

  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: round2(totalmem() / 2 ** 30),
    platform: `${process.platform} ${process.arch}`,
    serverCommand,
    options: { ...opts, out: relative(projectRoot, opts.out) },
    runtimeSeconds,
    notes,
    stores: {
      pets: opts.pets,
      seedMs: { sqlite: seedSqliteMs, postgres: seedPgMs ?? null },
      firstPageBytes: Buffer.byteLength(firstPage.body),
      baselineBodyBytes: Buffer.byteLength(baselineBody),
      deepCursors: Object.fromEntries(targets.map((tg) => [tg.name, tg.deep])),
    },
    scenarios: summaries,
    coldStartMs: { runs: coldStarts, median: coldMedian },
    memoryAfterLoad: memory,
    scale: { small: opts.smallPets, big: opts.big, seedMs: seedBigMs, samplesPerBatch: opts.samples, positions: scaleRows, raw: scale },
    budgets,
    profile: profile ?? null,
  };
  mkdirSync(join(opts.out, '..'), { recursive: true });
  writeFileSync(opts.out, `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${relative(projectRoot, opts.out)}`);
}

main().then(
  async () => {
    await cleanup();
    process.exit(0);
  },
  async (error: unknown) => {
    // After Ctrl-C the children die first and main() trips over that: the signal handler exits.
    if (!interrupted) console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    await cleanup();
    process.exit(interrupted ? 130 : 1);
  },
);
