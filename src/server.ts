/**
 * Composes the running service: database, key cache, app, HTTP server, and graceful shutdown.
 * The one module that imports every layer (see test/quick/architecture.test.ts).
 */
import { handlers } from '../generated/handlers.js';
import { openStores } from '../generated/stores.js';
import { KeyCache } from './auth/keyCache.js';
import type { Config } from './config.js';
import { createCursorCodec } from './core/cursor.js';
import { createApp, type AppOptions } from './pipeline/requestPath.js';
import { createReadiness, planDrain } from './transport/drain.js';
import { listenHttp, type HttpListener } from './transport/listen.js';
import type { Metrics } from './features/metrics/metrics.js';
import type { RateLimiter } from './features/rateLimit/rateLimit.js';
import type { ContractViolation } from './http/responseChecker.js';
import type { KeyChecker } from './pipeline/authenticate.js';
import type { Logger } from './shared/logger.js';
import { docsPath } from './shared/paths.js';
import { inUnitOfWork } from './store/queries/unitOfWork.js';
import { basePathOf, loadBundledSpec, type OpenApiDocument } from './shared/spec.js';
import { createApiKeyStore, type ApiKeyStore } from './store/apiKeys.js';
import { openPostgres, openSqlite, type DatabaseHandle } from './store/database.js';
import { createDeprecatedCallLog, deprecatedCallListener } from './features/deprecation/calls.js';
import { startIdempotencyPurge } from './features/exactlyOnce/purge.js';
import { traceQueries } from './store/queries/prepared.js';
import { readSecret } from './store/secrets.js';
import type { Tracing } from './features/tracing/tracing.js';

export interface RunningServer {
  /** `http://host:port`, without the base path. */
  origin: string;
  basePath: string;
  database: DatabaseHandle;
  keys: ApiKeyStore;
  /** The key store's cache (not loaded nor refreshed when `keyChecker` replaces it: the sandbox). */
  keyCache: KeyCache;
  /** Set when this start created the first key: show it once, never log it. */
  bootstrapKey?: { id: number; key: string };
  /** True when no key is active (none made yet, or all revoked; not in the sandbox): the console says how to make one. */
  noActiveKey?: boolean;
  violations: ContractViolation[];
  http: HttpListener['server'];
  /** `http://host:port` of the metrics listener (GET /metrics), when METRICS_PORT is set. */
  metricsOrigin?: string;
  /** Stops accepting (on the metrics listener too), lets in-flight requests finish, closes the database. */
  close(): Promise<void>;
  /**
   * What SIGTERM and SIGINT do (src/main.ts): a drain first (src/transport/drain.ts: /readyz 503, every
   * request still served with `Connection: close`) when SHUTDOWN_DRAIN_MS asks for one or, unset,
   * when something has been probing /readyz; then `close()`. Otherwise `close()` at once.
   */
  shutdown(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  logger: Logger;
  /** An already open database (tests); otherwise opened from the config. */
  database?: DatabaseHandle;
  document?: OpenApiDocument;
  /** Create a first key when none exists (the default for a real start). */
  bootstrapKey?: boolean;
  /**
   * Checks bearer tokens instead of the key store's cache: scripts/sandbox.ts alone passes one (it
   * accepts its one published key). src/main.ts never does, and nothing in the environment sets
   * it, so the production key check is the cache's, exactly as without this option.
   */
  keyChecker?: KeyChecker;
  /** Inserts stages into the request path (scripts/sandbox.ts: its marker header and reset route, first). */
  arrangeStages?: AppOptions['arrangeStages'];
  /** How often calls of deprecated operations are written (FLUSH_EVERY_MS unless set; a test that reads the store before a write sets it long). */
  deprecatedCallsFlushMs?: number;
}

export function openDatabase(config: Config): Promise<DatabaseHandle> {
  return config.databaseUrl ? openPostgres({ connection: config.databaseUrl, preparedStatements: config.databasePreparedStatements ?? true }) : openSqlite(config.sqlitePath);
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { config } = options;
  const document = options.document ?? loadBundledSpec();
  // Traces only when the OpenTelemetry variables ask for them: the SDK is loaded then and only then.
  let tracing: Tracing | undefined;
  if (config.tracing !== undefined) {
    const { startTracing } = await import('./features/tracing/tracing.js');
    tracing = startTracing({ config: config.tracing, document, logger: options.logger });
  }
  // Traced, every line logged inside a request's span carries its trace and span ids.
  const logger = tracing === undefined ? options.logger : tracing.correlated(options.logger);
  const database = options.database ?? (await openDatabase(config));
  // Before the stores compile their queries: each run of one is then a span under its request's.
  if (tracing !== undefined) traceQueries(database.db, tracing.queries(database));
  const keys = createApiKeyStore(database.db);

  const keyCache = new KeyCache(keys, {
    refreshMs: config.keyRefreshMs,
    maxStaleMs: 5000,
    onRefreshError: (error) => logger.warn({ err: error }, 'could not reload API keys'),
  });
  if (!options.keyChecker) await keyCache.startRefreshing();

  // Metrics only with METRICS_PORT: prom-client is loaded then and only then (off the start-up path otherwise).
  let metrics: Metrics | undefined;
  if (config.metricsPort !== undefined) {
    const { createMetrics } = await import('./features/metrics/metrics.js');
    metrics = createMetrics({ dialect: database.dialect, poolCounts: database.poolCounts, keysLoadedAt: () => keyCache.lastLoadedAt(), document });
  }

  // Rate limits only with RATE_LIMIT: the limiter (and ioredis, with REDIS_URL) is loaded then and only then.
  let rateLimit: RateLimiter | undefined;
  if (config.rateLimit !== undefined) {
    const { createRateLimiter } = await import('./features/rateLimit/rateLimit.js');
    rateLimit = await createRateLimiter({ config: config.rateLimit, logger, onFailOpen: metrics?.countRateLimitFailOpen });
  }

  // Who still calls deprecated operations, per key, in the store (written in batches).
  const deprecatedCalls = createDeprecatedCallLog(database.db, (error) => logger.warn({ err: error }, 'could not record calls of deprecated operations'), options.deprecatedCallsFlushMs);
  const onDeprecatedCall = deprecatedCallListener(deprecatedCalls, metrics && ((operationId) => metrics.countDeprecatedCall(operationId)));

  const basePath = basePathOf(document);
  const readiness = createReadiness();
  const { app, violations, corsFor } = createApp({
    document,
    handlers,
    deps: { ...openStores({ db: database.db, dialect: database.dialect, onBatch: metrics?.observeBatch }), cursors: createCursorCodec(await readSecret(database.db, 'cursor')), basePath, unitOfWork: (work) => inUnitOfWork(database.db, work) },
    keys: options.keyChecker ?? keyCache,
    ping: database.ping,
    logger,
    validateResponses: config.validateResponses,
    docsFile: docsPath,
    corsOrigins: config.corsOrigins,
    metrics,
    rateLimit,
    brownouts: config.brownouts,
    onDeprecatedCall,
    readiness,
    tracing: tracing?.requests,
    arrangeStages: options.arrangeStages,
    exactlyOnce: { db: database.db, dialect: database.dialect, onBatch: metrics?.observeBatch },
  });

  const httpServer = await listenHttp(app, { port: config.port, host: config.host, headersTimeoutMs: config.headersTimeoutMs, requestTimeoutMs: config.requestTimeoutMs, maxConnections: config.maxConnections, logger, corsFor });

  let metricsServer: HttpListener | undefined;
  if (metrics) {
    try {
      // A scraper or two: its own small bound, out of the API's.
      metricsServer = await listenHttp(metrics.listener, { port: config.metricsPort ?? 0, host: config.metricsHost ?? '127.0.0.1', headersTimeoutMs: config.headersTimeoutMs, requestTimeoutMs: config.requestTimeoutMs, maxConnections: 64, logger });
    } catch (error) {
      await httpServer.close();
      await rateLimit?.close();
      keyCache.stopRefreshing();
      await deprecatedCalls.close();
      if (!options.database) await database.close();
      throw error;
    }
  }

  const purge = startIdempotencyPurge(database.db, {
    onPurged: (count) => logger.info({ count }, 'purged Idempotency-Key records past their retention'),
    onError: (error) => logger.warn({ err: error }, 'could not purge old Idempotency-Key records'),
  });

  /** Set while a drain waits: ends it (a close during the drain closes at once). */
  let endDrain: (() => void) | undefined;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      endDrain?.();
      // The metrics listener closes alongside the API's (both let their in-flight requests finish).
      await Promise.all([httpServer.close(), metricsServer?.close()]);
      await rateLimit?.close();
      keyCache.stopRefreshing();
      await purge.stop();
      // After the last request, before the database closes: no counted call is lost.
      await deprecatedCalls.close();
      if (!options.database) await database.close();
      // Last: every request's span has ended, so the batch still held is the last to export.
      await tracing?.shutdown();
    })());

  let shuttingDown: Promise<void> | undefined;
  const shutdown = () =>
    (shuttingDown ??= (async () => {
      const { drainMs, why, probedAgoMs } = planDrain(readiness, config.shutdownDrainMs);
      if (drainMs > 0) {
        readiness.draining = true;
        httpServer.closeConnectionsAfterAnswers();
        logger.info({ drainMs, why, probedAgoMs }, 'draining: /readyz answers 503 and every request is still served, each with Connection: close, until the listener closes');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, drainMs);
          endDrain = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        logger.info({ drainMs }, 'drained: closing the listener');
      }
      await close();
    })());

  const running: RunningServer = { origin: httpServer.origin, basePath, database, keys, keyCache, violations, http: httpServer.server, close, shutdown };
  // The first key is made only now that the server listens: a start that failed before (a port
  // taken) would otherwise have stored a key that was never shown, and no later start shows one.
  try {
    if ((options.bootstrapKey ?? true) && (await keys.count()) === 0) {
      const created = await keys.create('bootstrap');
      running.bootstrapKey = { id: created.info.id, key: created.key };
      if (!options.keyChecker) await keyCache.refresh();
    }
    if (!options.keyChecker && keyCache.activeCount() === 0) running.noActiveKey = true;
  } catch (error) {
    await close();
    throw error;
  }
  if (metricsServer) {
    running.metricsOrigin = metricsServer.origin;
    logger.info({ metrics: `${metricsServer.origin}/metrics` }, 'metrics listening');
  }
  return running;
}
