/**
 * Prometheus metrics (prom-client), served on their own listener (METRICS_PORT, bound to
 * METRICS_HOST, 127.0.0.1 by default) and never on the public port: the API's port answers
 * /metrics with its usual 404, key or no key. Off (this module not even loaded) when METRICS_PORT
 * is unset.
 *
 * HTTP server metrics follow OpenTelemetry's semantic conventions for HTTP, in their Prometheus
 * form (dots become underscores, the unit `s` becomes the suffix `_seconds`, a `{request}` unit is
 * dropped), so dashboards and alerts written for any conforming server read ours unchanged:
 * - `http_server_request_duration_seconds`, a histogram with the conventions' buckets, by
 *   `http_request_method` (the methods the conventions know, any other `_OTHER`),
 *   `http_response_status_code`, `http_route` (the matched route, never the path: none when no
 *   route matched), `url_scheme` and, for a 5xx or an answer cut short, `error_type`. Its
 *   `_count` is the request count: no separate counter;
 * - `http_server_active_requests`, requests in flight, by method and scheme.
 * Every label is bounded: a client cannot mint series.
 *
 * The service's own metrics keep the `animal_store_` prefix:
 * - the database pool (PostgreSQL: total, idle, waiting; SQLite has no pool: `db_info` says which);
 * - the size of each group commit (src/store/queries/batcher.ts);
 * - the age of the API key cache (seconds since its last successful reload);
 * - requests served without a rate-limit check because the counter store failed (../rateLimit/rateLimit.ts);
 * - calls of deprecated operations, by operation (never by key: `npm run keys -- usage` has that);
 * - prom-client's default process and Node.js metrics (CPU, memory, event loop lag, GC, handles).
 *
 * Cost on the request path: a clock read, a method lookup, one 'close' listener, and at the close
 * one histogram observation; the in-flight count is a plain number per method, read at scrape time.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { OpenApiDocument } from '../../shared/spec.js';
import { ABORTED, conventionalMethod, routes, URL_SCHEME } from '../../http/conventions.js';
import type { Exchange } from '../../http/exchange.js';
import { refuse } from '../../errors/refusal.js';
import { answerOutside, refuseOutside } from '../../http/respond.js';
import { BinaryBody } from '../../shared/schemas.js';

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
  /** The contract the server runs: each operation's path template under the base path is its `http_route`. */
  document: OpenApiDocument;
}

export interface Metrics {
  registry: Registry;
  /** Times a request; its duration is observed, by its route (../../http/conventions.ts), when the response is done. */
  track(exchange: Exchange): void;
  /** One group commit of `size` creates. */
  observeBatch(size: number): void;
  /** One request served without a rate-limit check: the counter store (Redis) failed (../rateLimit/rateLimit.ts fails open). */
  countRateLimitFailOpen(): void;
  /** One call of a deprecated operation (../deprecation/deprecation.ts), whatever its answer. */
  countDeprecatedCall(operationId: string): void;
  /** One attempt to deliver a webhook (../webhooks/dispatcher.ts): its outcome, and when delivered, the time since the event's commit. */
  countWebhookAttempt(event: string, outcome: 'delivered' | 'failed' | 'gone', lagMs: number | undefined): void;
  /** The metrics listener's request handler: GET (or HEAD) /metrics, anything else a 404 or 405. */
  listener: RequestListener;
}

/**
 * The conventions' advised boundaries for http.server.request.duration, in seconds, so histograms
 * from other servers aggregate with ours; below 5 ms only the sum and count tell the latency.
 */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
/** From an event's commit to its receiver's 2xx: milliseconds when all is well, up to the retry schedule's three days. */
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 300, 1_800, 7_200, 36_000, 86_400, 259_200];
/** Up to the batcher's maxBatch (256). */
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

type DurationLabel = 'error_type' | 'http_request_method' | 'http_response_status_code' | 'http_route' | 'url_scheme';
type DurationLabels = Partial<Record<DurationLabel, string | number>>;

/**
 * The labels of one finished or abandoned request, keys in alphabetical order (prom-client writes
 * them in the order of the first observation of a series): the status only when one was sent,
 * the route only when one matched, error_type only for a 5xx or an answer cut short.
 */
function durationLabels(method: string, res: ServerResponse, route: string | undefined): DurationLabels {
  const status = res.statusCode;
  const finished = res.writableFinished;
  const labels: DurationLabels = {};
  if (!finished) labels.error_type = ABORTED;
  else if (status >= 500) labels.error_type = String(status);
  labels.http_request_method = method;
  if (finished || res.headersSent) labels.http_response_status_code = status;
  if (route !== undefined) labels.http_route = route;
  labels.url_scheme = URL_SCHEME;
  return labels;
}

export function createMetrics(options: MetricsOptions): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const duration = new Histogram<DurationLabel>({
    name: 'http_server_request_duration_seconds',
    help: 'Duration of HTTP server requests: from the request reaching the server to its response handed to the OS (or its connection closing first). OpenTelemetry http.server.request.duration.',
    labelNames: ['error_type', 'http_request_method', 'http_response_status_code', 'http_route', 'url_scheme'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const routeOf = routes(options.document);
  // A plain number per method, read at scrape time: a Gauge's own inc/dec would hash labels twice per request.
  const active = new Map<string, number>();
  new Gauge({
    name: 'http_server_active_requests',
    help: 'HTTP server requests in flight: received, their response not yet done. OpenTelemetry http.server.active_requests.',
    labelNames: ['http_request_method', 'url_scheme'] as const,
    registers: [registry],
    collect() {
      for (const [method, count] of active) this.set({ http_request_method: method, url_scheme: URL_SCHEME }, count);
    },
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

  const webhookAttempts = new Counter({
    name: 'animal_store_webhook_attempts_total',
    help: "Attempts to deliver a webhook, by event (the spec's webhook name) and outcome: delivered (a 2xx), failed (retried, or given up once the schedule is spent), gone (a 410: the endpoint is disabled).",
    labelNames: ['event', 'outcome'] as const,
    registers: [registry],
  });
  const webhookLag = new Histogram({
    name: 'animal_store_webhook_delivery_lag_seconds',
    help: "From a webhook event's commit to its receiver's 2xx, retries included.",
    labelNames: ['event'] as const,
    buckets: LAG_BUCKETS,
    registers: [registry],
  });

  const listener: RequestListener = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') {
      refuseOutside(res, refuse('not_found', 'metricsOnly'));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      refuseOutside(res, refuse('method_not_allowed', 'notOnPath', req.method ?? '', '/metrics', 'GET, HEAD'));
      return;
    }
    registry.metrics().then(
      // node:http sends no body to a HEAD, only its length.
      (text) => answerOutside(res, 200, new BinaryBody(Buffer.from(text, 'utf8'), registry.contentType)),
      () => refuseOutside(res, refuse('internal_error', 'metrics')),
    );
  };

  return {
    registry,
    track(exchange) {
      const started = performance.now();
      const method = conventionalMethod(exchange.req.method);
      active.set(method, (active.get(method) ?? 0) + 1);
      // 'close' comes once per response, a tick after 'finish' (the whole response handed to the OS)
      // or when the connection is lost first: one listener both ends the in-flight count and times
      // the request, an answer cut short included (error_type `aborted`).
      exchange.res.on('close', () => {
        active.set(method, (active.get(method) ?? 0) - 1);
        duration.observe(durationLabels(method, exchange.res, routeOf(exchange)), (performance.now() - started) / 1000);
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
    countWebhookAttempt(event, outcome, lagMs) {
      webhookAttempts.inc({ event, outcome });
      if (lagMs !== undefined) webhookLag.observe({ event }, lagMs / 1000);
    },
    listener,
  };
}
