/**
 * listPets latency on a small store against a big one: one keep-alive connection, sequential
 * requests, at three positions (first page, a deep cursor, a filtered deep cursor).
 */
import http from 'node:http';
import { createCursorCodec } from '../src/domain/cursor.js';
import type { BenchOptions } from './options.js';
import { median, percentile, round2, round3, log } from './stats.js';
import { prepareSqliteStore, type PreparedStore } from './stores.js';
import { auth, startApi, stop, type ApiServer, type ServerCommand } from './targets.js';

interface ScaleRow {
  position: string;
  smallP50Ms: number;
  bigP50Ms: number;
  smallP99Ms: number;
  bigP99Ms: number;
  ratio: number;
}

/** Every batch's p50 and p99, per position and store. */
interface ScaleRaw {
  position: string;
  small: { p50: number[]; p99: number[] };
  big: { p50: number[]; p99: number[] };
}

export interface Scale {
  rows: ScaleRow[];
  seedMs: number;
}

/** GET `path` with one keep-alive `agent`: node:http rather than fetch, whose own overhead would blur sub-millisecond latencies. */
function get(agent: http.Agent, url: string, key: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: auth(key) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${url} timed out`)));
  });
}

/** `count` sequential requests on one connection; their times in ms, ascending. */
async function sequentialLatencies(server: ApiServer, path: string, count: number): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = process.hrtime.bigint();
      const reply = await get(agent, `${server.origin}${path}`, server.store.key);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (reply.status !== 200) throw new Error(`GET ${path} answered ${reply.status}: ${reply.body}`);
      times.push(ms);
    }
    return times.sort((a, b) => a - b);
  } finally {
    agent.destroy();
  }
}

/** The three positions, with cursors made with the store's own secret at 90 % of `count`. */
function positions(store: PreparedStore, count: number): { name: string; path: string }[] {
  const codec = createCursorCodec(store.secret);
  const deepId = Math.floor(count * 0.9);
  return [
    { name: 'first page', path: '/v1/pets?limit=20' },
    { name: 'deep cursor (90%)', path: `/v1/pets?limit=20&cursor=${codec.encode({ afterId: deepId })}` },
    { name: 'status=sold + deep cursor (90%)', path: `/v1/pets?status=sold&limit=20&cursor=${codec.encode({ afterId: deepId, status: 'sold' })}` },
  ];
}

type Side = { server: ApiServer; paths: { name: string; path: string }[] };

/** Warm-up, then max(3, --rounds) interleaved batches of --samples per position and store. */
async function sample(small: Side, big: Side, opts: BenchOptions): Promise<ScaleRaw[]> {
  const raw: ScaleRaw[] = small.paths.map((p) => ({ position: p.name, small: { p50: [], p99: [] }, big: { p50: [], p99: [] } }));
  const warm = Math.max(50, Math.round(opts.samples / 5));
  for (let i = 0; i < small.paths.length; i++) {
    await sequentialLatencies(small.server, small.paths[i]!.path, warm);
    await sequentialLatencies(big.server, big.paths[i]!.path, warm);
  }
  for (let round = 0; round < Math.max(3, opts.rounds); round++) {
    for (let i = 0; i < small.paths.length; i++) {
      // Alternate which store goes first, so drift does not favour one.
      const order = round % 2 === 0 ? (['small', 'big'] as const) : (['big', 'small'] as const);
      for (const which of order) {
        const side = which === 'small' ? small : big;
        const times = await sequentialLatencies(side.server, side.paths[i]!.path, opts.samples);
        raw[i]![which].p50.push(percentile(times, 50));
        raw[i]![which].p99.push(percentile(times, 99));
      }
    }
  }
  return raw;
}

function toRow({ position, small, big }: ScaleRaw): ScaleRow {
  const [smallP50, bigP50] = [median(small.p50), median(big.p50)];
  return { position, smallP50Ms: round3(smallP50), bigP50Ms: round3(bigP50), smallP99Ms: round3(median(small.p99)), bigP99Ms: round3(median(big.p99)), ratio: round2(bigP50 / smallP50) };
}

/** Seeds a --smallPets and a --big store in `dir`, serves each, and compares their latencies. */
export async function measureScale(dir: string, command: ServerCommand, opts: BenchOptions): Promise<Scale> {
  const t = performance.now();
  const smallStore = await prepareSqliteStore(dir, 'small', opts.smallPets, 'sql');
  const bigStore = await prepareSqliteStore(dir, 'big', opts.big, 'sql');
  const seedMs = Math.round(performance.now() - t);
  log(`seeded ${opts.smallPets} and ${opts.big} pets in ${seedMs} ms`);
  const small = await startApi(smallStore, 'server (small store)', command, opts);
  const big = await startApi(bigStore, 'server (big store)', command, opts);
  try {
    const raw = await sample({ server: small, paths: positions(smallStore, opts.smallPets) }, { server: big, paths: positions(bigStore, opts.big) }, opts);
    return { rows: raw.map(toRow), seedMs };
  } finally {
    await Promise.all([stop(small), stop(big)]);
  }
}
