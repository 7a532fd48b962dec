/**
 * Prometheus metrics (prom-client), served on their own listener (METRICS_PORT, bound to
 * METRICS_HOST, 127.0.0.1 by default) and never on the public port: the API's port answers
 * /metrics with its usual 404, key or no key. Off (this module not even loaded) when METRICS_PORT
 * is unset.
 *
 * What is counted, with bounded labels only (never a raw path: a client could mint series):
 * - every request, by `lane` (api, probe, docs, unknown), `operation` (the operationId under the
 *   API, `none` when the request got no operation: unknown path, 405, failed key check, CORS
 *   preflight; `healthz`/`readyz`, `openapi.json`/`docs` on the other lanes) and `status`;
 * - its latency, by lane and operation;
 * - the database pool (PostgreSQL: total, idle, waiting; SQLite has no pool: `db_info` says which);
 * - the size of each group commit (src/store/batcher.ts);
 * - the age of the API key cache (seconds since its last successful reload);
 * - requests served without a rate-limit check because the counter store failed (./rateLimit.ts);
 * - calls of deprecated operations, by operation (never by key: `npm run keys -- usage` has that);
 * - prom-client's default process and Node.js metrics (CPU, memory, event loop lag, GC, handles).
 *
 * Cost on the request path: two clock reads, one 'finish' listener, and at the finish one
 * prom-client counter increment and one histogram observation.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Exchange } from './exchange.js';
import { Refusal } from './refusal.js';
import { writeJson } from './respond.js';

/** Where a request went, as app.ts splits them: a bounded set, so a label. */
export type Lane = 'api' | 'probe' | 'docs' | 'unknown';

/** The PostgreSQL pool's counts (pg.Pool's totalCount, idleCount, waitingCount). */
export interface PoolCounts {
  total: number;
  idle: number;
  waiting: number;
}

export interface MetricsOptions {
  /** `sqlite` or `postgres`, for animal_store_db_info. */
  dialect: string;
  /** The pool's counts at scrape time; undefined for SQLite (no pool). */
  poolCounts?: (() => PoolCounts) | undefined;
  /** When the API key cache last reloaded successfully (ms since the epoch), undefined if never. */
  keysLoadedAt: () => number | undefined;
}

export interface Metrics {
  registry: Registry;
  /** Starts timing a request; its count and latency are recorded when the response finishes. */
  track(exchange: Exchange, lane: Lane, operation: string | undefined): void;
  /** One group commit of `size` creates. */
  observeBatch(size: number): void;
  /** One request served without a rate-limit check: the counter store (Redis) failed (./rateLimit.ts fails open). */
  countRateLimitFailOpen(): void;
  /** One call of a deprecated operation (./deprecation.ts), whatever its answer. */
  countDeprecatedCall(operationId: string): void;
  /** The metrics listener's request handler: GET (or HEAD) /metrics, anything else a 404 or 405. */
  listener: RequestListener;
}

/** Seconds: a getPet is well under a millisecond in process; the outage bounds are 2–3.5 s. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Up to the batcher's maxBatch (256). */
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

export function createMetrics(options: MetricsOptions): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: 'animal_store_http_requests_total',
    help: 'HTTP requests answered, by lane (api, probe, docs, unknown), operation (operationId; none when the request got no operation) and status.',
    labelNames: ['lane', 'operation', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'animal_store_http_request_duration_seconds',
    help: 'Time from the request reaching the server to its response handed to the OS, by lane and operation.',
    labelNames: ['lane', 'operation'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const batches = new Histogram({ name: 'animal_store_create_batch_size', help: 'Creates written per group commit (one transaction and one fsync).', buckets: BATCH_BUCKETS, registers: [registry] });
  new Gauge({ name: 'animal_store_db_info', help: 'The database in use (dialect label), always 1.', labelNames: ['dialect'] as const, registers: [registry] }).set({ dialect: options.dialect }, 1);

  const { poolCounts } = options;
  if (poolCounts) {
    const pool = (name: string, help: string, pick: (counts: PoolCounts) => number) =>
      new Gauge({ name, help, registers: [registry], collect() { this.set(pick(poolCounts())); } });
    pool('animal_store_db_pool_connections', 'PostgreSQL connections open in the pool (in use and idle).', (c) => c.total);
    pool('animal_store_db_pool_idle_connections', 'PostgreSQL connections open and idle in the pool.', (c) => c.idle);
    pool('animal_store_db_pool_waiting_requests', 'Queries waiting for a pooled PostgreSQL connection.', (c) => c.waiting);
  }
  new Gauge({
    name: 'animal_store_api_key_cache_age_seconds',
    help: 'Seconds since the API key cache last reloaded successfully (NaN before the first load); past 5 requests get 503.',
    registers: [registry],
    collect() {
      const loadedAt = options.keysLoadedAt();
      this.set(loadedAt === undefined ? Number.NaN : (Date.now() - loadedAt) / 1000);
    },
  });

  // Only incremented while Redis fails, so prom-client's own counter costs nothing on a healthy request.
  const failOpen = new Counter({
    name: 'animal_store_rate_limit_fail_open_total',
    help: 'Requests served without a rate-limit check because the counter store (Redis) failed: rate limits fail open.',
    registers: [registry],
  });

  const deprecatedCalls = new Counter({
    name: 'animal_store_deprecated_requests_total',
    help: 'Calls of deprecated operations, by operation (operationId), whatever the answer (401 and 410 included).',
    labelNames: ['operation'] as const,
    registers: [registry],
  });

  const listener: RequestListener = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') {
      writeJson(res, 404, new Refusal(404, 'not_found', 'This listener serves GET /metrics only.').body());
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      writeJson(res, 405, new Refusal(405, 'method_not_allowed', `${req.method ?? ''} is not allowed on /metrics; use GET, HEAD.`).body(), ['Allow', 'GET, HEAD']);
      return;
    }
    registry.metrics().then(
      (text) => {
        const payload = Buffer.from(text, 'utf8');
        res.writeHead(200, { 'Content-Type': registry.contentType, 'Content-Length': payload.length, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : payload);
      },
      () => writeJson(res, 500, new Refusal(500, 'internal_error', 'The metrics could not be collected.').body()),
    );
  };

  return {
    registry,
    track(exchange, lane, operation) {
      const started = performance.now();
      // 'finish': the whole response was handed to the OS. A connection lost before that is not
      // counted (no status was delivered).
      exchange.res.on('finish', () => {
        const labels = { lane, operation: operation ?? exchange.operationId ?? 'none' };
        latency.observe(labels, (performance.now() - started) / 1000);
        requests.inc({ ...labels, status: exchange.res.statusCode });
      });
    },
    observeBatch(size) {
      batches.observe(size);
    },
    countRateLimitFailOpen() {
      failOpen.inc();
    },
    countDeprecatedCall(operationId) {
      deprecatedCalls.inc({ operation: operationId });
    },
    listener,
  };
}
