/**
 * Webhooks under load. Per store, our server on a store of its own (a copy of the SQLite
 * store; a second PostgreSQL database) with one endpoint subscribed to every event: a receiver in
 * this process, answering 204 at once. Its createPet runs beside the plain server's in the same
 * rounds (no endpoint there: each create still writes its event to the outbox, which is fanned out
 * to nobody), so their ratio is what delivering costs. After each of its load runs the bench waits
 * until every event of the run has arrived (so that no delivery runs into the next target's
 * window) and says how fast events arrived during the measured window, how many were still to go
 * at its end and how long after their emit they arrived; at the end it counts the receiver's
 * distinct webhook-ids against the pets created and the events in the outbox.
 */
import { createServer } from 'node:http';
import { once } from 'node:events';
import { sql, type Kysely } from 'kysely';
import { createEndpointStore } from '../src/features/webhooks/endpoints.js';
import { openPostgres, openSqlite, type DatabaseHandle } from '../src/store/database.js';
import type { Database } from '../src/store/schema.js';
import { childPids } from './cleanup.js';
import type { RunResult } from './load.js';
import { cpuSnapshot, cpuUse } from './measure.js';
import type { Figures } from './scenarios.js';
import { log, median, percentile, round2, sleep } from './stats.js';
import type { PreparedStore } from './stores.js';

/** The target's name after its store's (`sqlite webhooks on`). */
export const WEBHOOKS_ON = 'webhooks on';
/** The server's settings for a receiver on 127.0.0.1; the rest are the defaults (WEBHOOKS_CONCURRENCY 16). */
export const WEBHOOKS_ENV = { WEBHOOKS_ALLOW_PRIVATE: 'true' } as const;
/** How long to wait after a load run for its last events; a run whose events are not all there by then is said, and the next starts. */
const DRAIN_MS = 15_000;
/** The fewest deliveries after a window that say what one costs the server (its CPU counts in 10 ms ticks). */
const DRAIN_SAMPLE = 200;
/** At the end, how long to wait for whatever is still missing before counting it lost. */
const FINAL_DRAIN_MS = 10_000;

interface Arrival {
  id: string;
  /** When the receiver had read it: epoch ms (the clock of the body's timestamp) and performance.now(). */
  at: number;
  mono: number;
  /** The body's `timestamp`: when the handler emitted the event, in the create's transaction. */
  emittedAt: number;
}

export interface WebhookReceiver {
  /** The receiver's URL for `path` (one per hooked server, so their arrivals stay apart). */
  url(path: string): string;
  arrivals(path: string): Arrival[];
  /** Distinct webhook-ids heard at `path` so far. */
  distinct(path: string): Set<string>;
  /** Requests that were not a delivery (no webhook-id, a body without a timestamp). */
  malformed: number;
  close(): Promise<void>;
}

/** A bare node:http receiver in this process: reads the body, notes the arrival, answers 204. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const byPath = new Map<string, Arrival[]>();
  const idsByPath = new Map<string, Set<string>>();
  const receiver = { malformed: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const mono = performance.now();
      const at = Date.now();
      res.writeHead(204).end();
      const id = req.headers['webhook-id'];
      let emittedAt = Number.NaN;
      try {
        emittedAt = Date.parse((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp?: string }).timestamp ?? '');
      } catch {
        // Counted below.
      }
      if (typeof id !== 'string' || Number.isNaN(emittedAt)) {
        receiver.malformed++;
        return;
      }
      const path = req.url ?? '';
      const list = byPath.get(path) ?? [];
      byPath.set(path, list);
      list.push({ id, at, mono, emittedAt });
      const ids = idsByPath.get(path) ?? new Set<string>();
      idsByPath.set(path, ids);
      ids.add(id);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the webhook receiver has no port');
  return Object.assign(receiver, {
    url: (path: string) => `http://127.0.0.1:${address.port}${path}`,
    arrivals: (path: string) => byPath.get(path) ?? [],
    distinct: (path: string) => idsByPath.get(path) ?? new Set<string>(),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

const openStore = (store: PreparedStore): Promise<DatabaseHandle> => (store.target === 'sqlite' ? openSqlite(store.location) : openPostgres({ connection: store.env.DATABASE_URL ?? '' }));

/** Subscribes `url` to every event on `store` (before its server starts). */
export async function subscribe(store: PreparedStore, url: string): Promise<void> {
  const handle = await openStore(store);
  try {
    await createEndpointStore(handle.db).add(url, undefined);
  } finally {
    await handle.close();
  }
}

const count = async (db: Kysely<Database>, query: ReturnType<typeof sql<{ n: number | string }>>) => Number((await query.execute(db)).rows[0]?.n ?? 0);

/** One load run of the hooked server's createPet, as the receiver saw it. */
export interface WebhookRun {
  /** Events the run stored (its warm-up's too). */
  events: number;
  /** createPet's req/s in the measured window, and deliveries per second arriving in that window. */
  createsPerS: number;
  deliveriesPerS: number;
  /** Of the run's events, not yet arrived when the measured window ended … */
  behindAtEnd: number;
  /** … and how long after its end the last one arrived (0: none was behind) … */
  drainMs: number;
  /** … so how fast the server delivers with nothing else to do: deliveries per second after the window (NaN: none was behind) … */
  drainPerS: number;
  /** … and the server's CPU per delivery then, from /proc (NaN: fewer than DRAIN_SAMPLE deliveries to divide by). */
  drainServerUsPerDelivery: number;
  /** Emit → receiver, over the run's deliveries. */
  lagP50Ms: number;
  lagP99Ms: number;
  /** The receiver's CPU per delivery: this process's over the run and its drain, which under wrk does little else (with autocannon, the load too). */
  receiverUsPerDelivery: number;
  /** Events of the run still missing when the bench stopped waiting (DRAIN_MS). */
  late: number;
}

export interface WebhookSummary {
  target: string;
  /** Pets the hooked server created (its store's pets beyond the seeded ones), events in its outbox, and its deliveries by state. */
  petsCreated: number;
  events: number;
  deliveries: Record<string, number>;
  /** Distinct webhook-ids the receiver heard, those of them that are events of the outbox, deliveries beyond one per id. */
  received: number;
  receivedKnown: number;
  duplicates: number;
  /** Events of the outbox the receiver never heard. */
  missing: number;
  /** Emit → receiver over every delivery of the run (warm-ups and drains included). */
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  runs: WebhookRun[];
}

/** The bench's view of one hooked server: call `before` and `after` around each of its load runs, `finish` once after the rounds. */
export interface WebhookProbe {
  target: string;
  before(): void;
  after(r: RunResult): Promise<string>;
  finish(): Promise<WebhookSummary>;
  close(): Promise<void>;
}

/**
 * Watches the server on `store` (seeded with `seededPets`, subscribed to `receiver` at `path`,
 * started under `target`'s name) through the receiver and its store.
 */
export async function probeWebhooks(target: string, store: PreparedStore, seededPets: number, receiver: WebhookReceiver, path: string, serverPid: number): Promise<WebhookProbe> {
  const handle = await openStore(store);
  const db = handle.db;
  const eventCount = () => count(db, sql<{ n: number }>`select count(*) as n from webhook_events`);
  let eventsBefore = await eventCount();
  let fromIndex = receiver.arrivals(path).length;
  let cpuBefore = process.cpuUsage();
  const runs: WebhookRun[] = [];
  const distinct = () => receiver.distinct(path).size;

  /** Waits until `events` distinct ids have arrived, or `ms` passed: whether they all did. */
  const waitFor = async (events: number, ms: number) => {
    const deadline = performance.now() + ms;
    while (distinct() < events && performance.now() < deadline) await sleep(20);
    return distinct() >= events;
  };

  return {
    target,
    before() {
      fromIndex = receiver.arrivals(path).length;
      cpuBefore = process.cpuUsage();
    },
    async after(r) {
      const events = await eventCount();
      const drainFrom = performance.now();
      const serverBefore = cpuSnapshot(serverPid);
      await waitFor(events, DRAIN_MS);
      const serverAfter = cpuSnapshot(serverPid);
      const cpu = process.cpuUsage(cpuBefore);
      const arrivals = receiver.arrivals(path).slice(fromIndex);
      const drained = arrivals.filter((a) => a.mono >= drainFrom).length;
      const { from, to } = r.window;
      const inWindow = arrivals.filter((a) => a.mono >= from && a.mono <= to).length;
      const byEnd = arrivals.filter((a) => a.mono <= to).length;
      const last = arrivals.reduce((m, a) => Math.max(m, a.mono), to);
      const lags = arrivals.map((a) => a.at - a.emittedAt).sort((a, b) => a - b);
      const run: WebhookRun = {
        events: events - eventsBefore,
        createsPerS: r.rps,
        deliveriesPerS: Math.round(inWindow / Math.max((to - from) / 1000, 1e-3)),
        behindAtEnd: Math.max(0, events - eventsBefore - byEnd),
        drainMs: Math.round(last - to),
        drainPerS: Math.round(arrivals.filter((a) => a.mono > to).length / Math.max((last - to) / 1000, 1e-3)) || Number.NaN,
        drainServerUsPerDelivery: drained >= DRAIN_SAMPLE ? cpuUse(serverBefore, serverAfter, serverPid, drained, childPids()).serverUsPerRequest : Number.NaN,
        lagP50Ms: round2(percentile(lags, 50)),
        lagP99Ms: round2(percentile(lags, 99)),
        receiverUsPerDelivery: Math.round((cpu.user + cpu.system) / Math.max(1, arrivals.length)),
        late: Math.max(0, events - distinct()),
      };
      runs.push(run);
      eventsBefore = events;
      fromIndex = receiver.arrivals(path).length;
      return `${run.deliveriesPerS} deliveries/s in the window (creates ${run.createsPerS}/s); ${run.behindAtEnd} of the run's ${run.events} events still to arrive at its end, the last ${run.drainMs} ms after it${run.behindAtEnd ? ` (${run.drainPerS}/s then${Number.isNaN(run.drainServerUsPerDelivery) ? '' : `, ${run.drainServerUsPerDelivery} µs of server CPU each`})` : ''}${run.late ? `; ${run.late} STILL MISSING after ${DRAIN_MS / 1000} s` : ''}; emit → receiver p50 ${run.lagP50Ms} ms, p99 ${run.lagP99Ms} ms; receiver ${run.receiverUsPerDelivery} µs CPU/delivery`;
    },
    async finish() {
      const pets = await count(db, sql<{ n: number }>`select count(*) as n from pets`);
      const ids = (await sql<{ id: string }>`select id from webhook_events`.execute(db)).rows.map((row) => row.id);
      await waitFor(ids.length, FINAL_DRAIN_MS);
      const states = (await sql<{ state: string; n: number | string }>`select state, count(*) as n from webhook_deliveries group by state`.execute(db)).rows;
      const arrivals = receiver.arrivals(path);
      const heard = receiver.distinct(path);
      const known = new Set(ids);
      const lags = arrivals.map((a) => a.at - a.emittedAt).sort((a, b) => a - b);
      return {
        target,
        petsCreated: pets - seededPets,
        events: ids.length,
        deliveries: Object.fromEntries(states.map((s) => [s.state, Number(s.n)])),
        received: heard.size,
        receivedKnown: [...heard].filter((id) => known.has(id)).length,
        duplicates: arrivals.length - heard.size,
        missing: ids.filter((id) => !heard.has(id)).length,
        lagP50Ms: round2(percentile(lags, 50)),
        lagP99Ms: round2(percentile(lags, 99)),
        lagMaxMs: round2(lags.at(-1) ?? Number.NaN),
        runs,
      };
    },
    close: () => handle.close(),
  };
}

/** Whether every pet the server created reached the receiver, once, as an event of its outbox. */
export const allDelivered = (s: WebhookSummary) => s.missing === 0 && s.events === s.petsCreated && s.receivedKnown === s.petsCreated && s.received === s.receivedKnown;

/** The report's lines for each hooked server, beside its plain peer's createPet (`plain`) and its own (`hooked`) of the table. */
export function webhookLines(s: WebhookSummary, hooked: (Figures & { serverUsPerRequest: number }) | undefined, plain: (Figures & { serverUsPerRequest: number }) | undefined, ratio: number): string[] {
  const med = (pick: (r: WebhookRun) => number) => round2(median(s.runs.map(pick)));
  const states = Object.entries(s.deliveries).map(([state, n]) => `${n} ${state}`).join(', ') || 'none';
  const drained = med((r) => r.drainPerS);
  const drainCpu = med((r) => r.drainServerUsPerDelivery);
  const late = s.runs.filter((r) => r.late > 0).length;
  return [
    `- **${s.target}**: createPet ${hooked?.rps ?? '–'} req/s against ${plain?.rps ?? '–'} without a subscriber: **${ratio}×** (median of same-round ratios); server CPU ${hooked?.serverUsPerRequest ?? '–'} against ${plain?.serverUsPerRequest ?? '–'} µs per create (the deliveries made in the measured window included).`,
    `  Deliveries in the measured window: median ${med((r) => r.deliveriesPerS)}/s against ${med((r) => r.createsPerS)} creates/s; still to arrive when a window ended: median ${med((r) => r.behindAtEnd)} events (max ${Math.max(...s.runs.map((r) => r.behindAtEnd))}), the last arriving median ${med((r) => r.drainMs)} ms after (max ${Math.max(...s.runs.map((r) => r.drainMs))})${Number.isNaN(drained) ? '' : `, at ${drained} deliveries/s once the load had stopped`}${Number.isNaN(drainCpu) ? '' : ` (${drainCpu} µs of server CPU per delivery then)`}. The bench's process (the receiver, and little else under wrk): ${med((r) => r.receiverUsPerDelivery)} µs CPU per delivery.`,
    ...(late ? [`  **In ${late} of ${s.runs.length} runs the events were still arriving ${DRAIN_MS / 1000} s after the window**: the bench went on, so the runs that followed them are disturbed by the deliveries.`] : []),
    `  Emit → receiver over all ${s.received + s.duplicates} deliveries: p50 ${s.lagP50Ms} ms, p99 ${s.lagP99Ms} ms, max ${s.lagMaxMs} ms.`,
    `  ${allDelivered(s) ? 'Every event delivered' : '**EVENTS LOST OR UNACCOUNTED**'}: ${s.petsCreated} pets created, ${s.events} events in the outbox, ${s.received} distinct webhook-ids received (${s.receivedKnown} of them the outbox's), ${s.missing} missing, ${s.duplicates} delivered more than once; deliveries ${states}.`,
  ];
}
