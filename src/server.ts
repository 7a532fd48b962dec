/**
 * Composes the running service: database, key cache, the features, the app, the HTTP server, and
 * graceful shutdown. The one module that imports every layer (see test/quick/architecture.test.ts).
 */
import { handlers } from '../generated/handlers.js';
import { openStores } from '../generated/stores.js';
import { KeyCache } from './auth/keyCache.js';
import type { Config } from './config.js';
import { createCursorCodec } from './domain/cursor.js';
import type { Observers } from './features/feature.js';
import { startFeatures } from './features/index.js';
import { createApp, type App, type AppOptions } from './pipeline/requestPath.js';
import { allowedMethods, underBasePath } from './pipeline/match.js';
import { createReadiness, planDrain } from './transport/drain.js';
import { listenHttp, type HttpListener } from './transport/listen.js';
import type { ContractViolation } from './http/responseChecker.js';
import { compiledBackend } from './http/openapiBackend.js';
import type { KeyChecker } from './pipeline/authenticate.js';
import type { Logger } from './shared/logger.js';
import { docsPath } from './shared/paths.js';
import { inUnitOfWork } from './store/queries/unitOfWork.js';
import { basePathOf, loadBundledSpec, type OpenApiDocument } from './shared/spec.js';
import { createApiKeyStore, type ApiKeyStore } from './store/apiKeys.js';
import { openDatabase, type DatabaseHandle } from './store/database.js';
import { readSecret } from './store/secrets.js';

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
  /** `http://host:port` of each feature's own listener, by the feature's name (`metrics`: GET /metrics, with METRICS_PORT). */
  featureOrigins: Readonly<Record<string, string>>;
  /** Stops accepting, lets in-flight requests finish, closes the features (their listeners too), then the database. */
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
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { config } = options;
  const document = options.document ?? loadBundledSpec();
  const basePath = basePathOf(document);
  const backend = compiledBackend(document, basePath, config.validateResponses);
  const database = options.database ?? (await openDatabase(config));
  const keys = createApiKeyStore(database.db);

  const keyCache = new KeyCache(keys, {
    refreshMs: config.keyRefreshMs,
    maxStaleMs: 5000,
    onRefreshError: (error) => logger.warn({ err: error }, 'could not reload API keys'),
  });
  /** A start that fails half way closes what it opened. */
  const fail = async (error: unknown): Promise<never> => {
    keyCache.stopRefreshing();
    if (!options.database) await database.close();
    throw error;
  };
  if (!options.keyChecker) await keyCache.startRefreshing().catch(fail);

  const observers: Observers = {};
  const features = await startFeatures(config.features, {
    document,
    backend,
    serves: (url) => underBasePath(basePath, url),
    allowedMethods: (path) => allowedMethods(backend, path),
    database,
    logger: options.logger,
    keysLoadedAt: () => keyCache.lastLoadedAt(),
    observers,
    listen: (listener, address) => listenHttp(listener, { ...address, headersTimeoutMs: config.headersTimeoutMs, requestTimeoutMs: config.requestTimeoutMs, logger: options.logger }),
  }).catch(fail);
  const { logger } = features;
  const failStarted = async (error: unknown): Promise<never> => {
    await features.close();
    return fail(error);
  };

  const readiness = createReadiness();
  let created: App;
  let httpServer: HttpListener;
  try {
    created = createApp({
      document,
      handlers,
      deps: { ...openStores({ db: database.db, dialect: database.dialect, document, onBatch: observers.batch, onEvents: () => observers.eventsCommitted?.() }), cursors: createCursorCodec(await readSecret(database.db, 'cursor')), basePath, unitOfWork: (work) => inUnitOfWork(database.db, work) },
      keys: options.keyChecker ?? keyCache,
      oauth: config.oauth,
      ping: database.ping,
      logger,
      validateResponses: config.validateResponses,
      docsFile: docsPath,
      readiness,
      featureStages: features.stages,
      arrangeStages: options.arrangeStages,
    });
    // node:http's own refusals carry what the features add to every answer (CORS).
    httpServer = await listenHttp(created.app, { port: config.port, host: config.host, headersTimeoutMs: config.headersTimeoutMs, requestTimeoutMs: config.requestTimeoutMs, maxConnections: config.maxConnections, logger, corsFor: features.headersFor });
  } catch (error) {
    return failStarted(error);
  }
  const { violations } = created;

  /** Set while a drain waits: ends it (a close during the drain closes at once). */
  let endDrain: (() => void) | undefined;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      endDrain?.();
      await httpServer.close();
      keyCache.stopRefreshing();
      // After the last request, before the database closes: features write what they still hold, the last to start first.
      await features.close();
      if (!options.database) await database.close();
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

  const running: RunningServer = { origin: httpServer.origin, basePath, database, keys, keyCache, violations, http: httpServer.server, featureOrigins: features.origins, close, shutdown };
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
  return running;
}
