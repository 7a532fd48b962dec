/**
 * Composes the running service: database, key cache, app, HTTP server, and graceful shutdown.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handlers } from '../handlers/index.js';
import { KeyCache } from './auth/keyCache.js';
import { answerClientErrors } from './clientError.js';
import type { Config } from './config.js';
import { createCursorCodec } from './cursor.js';
import { createApp } from './http/app.js';
import type { ContractViolation } from './http/responseChecker.js';
import type { Logger } from './logger.js';
import { docsPath } from './paths.js';
import { basePathOf, loadBundledSpec, type OpenApiDocument } from './spec.js';
import { createApiKeyStore, type ApiKeyStore } from './store/apiKeys.js';
import { openPostgres, openSqlite, type DatabaseHandle } from './store/database.js';
import { createPetStore } from './store/pets.js';
import { readSecret } from './store/secrets.js';

export interface RunningServer {
  /** `http://host:port`, without the base path. */
  origin: string;
  basePath: string;
  database: DatabaseHandle;
  keys: ApiKeyStore;
  keyCache: KeyCache;
  /** Set when this start created the first key: show it once, never log it. */
  bootstrapKey?: { id: number; key: string };
  violations: ContractViolation[];
  http: Server;
  /** Stops accepting, lets in-flight requests finish, closes the database. */
  close(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  logger: Logger;
  /** An already open database (tests); otherwise opened from the config. */
  database?: DatabaseHandle;
  document?: OpenApiDocument;
  /** Create a first key when none exists (the default for a real start). */
  bootstrapKey?: boolean;
}

const SHUTDOWN_GRACE_MS = 10_000;

export function openDatabase(config: Config): Promise<DatabaseHandle> {
  return config.databaseUrl ? openPostgres({ connection: config.databaseUrl }) : openSqlite(config.sqlitePath);
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { config, logger } = options;
  const document = options.document ?? loadBundledSpec();
  const database = options.database ?? (await openDatabase(config));
  const keys = createApiKeyStore(database.db);

  let bootstrapKey: RunningServer['bootstrapKey'];
  if ((options.bootstrapKey ?? true) && (await keys.count()) === 0) {
    const created = await keys.create('bootstrap');
    bootstrapKey = { id: created.info.id, key: created.key };
  }

  const keyCache = new KeyCache(keys, {
    refreshMs: config.keyRefreshMs,
    maxStaleMs: 5000,
    onRefreshError: (error) => logger.warn({ err: error }, 'could not reload API keys'),
  });
  await keyCache.start();

  const basePath = basePathOf(document);
  const { app, violations } = createApp({
    document,
    handlers,
    deps: { pets: createPetStore(database.db, database.dialect), cursors: createCursorCodec(await readSecret(database.db, 'cursor')), basePath },
    keys: keyCache,
    ping: database.ping,
    logger,
    validateResponses: config.validateResponses,
    docsFile: docsPath,
  });

  const { headersTimeoutMs: headersTimeout, requestTimeoutMs: requestTimeout } = config;
  const http = createServer(
    {
      // Slow clients are cut off: all headers within headersTimeout, the whole request within
      // requestTimeout, both counted from the request's first byte.
      headersTimeout,
      requestTimeout,
      // Node only looks for expired requests this often (30 s by default, which would let a slow
      // client hold a connection for up to 30 s past either bound); a scan is cheap.
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(headersTimeout / 4))),
      keepAliveTimeout: 5_000,
    },
    app,
  );
  answerClientErrors(http, logger);
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(config.port, config.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  let closing: Promise<void> | undefined;
  // During shutdown, keep-alive connections are told to close after their current response, so
  // the process need not wait out the keep-alive timeout of clients that hold connections open.
  const inFlight = new Set<ServerResponse>();
  http.prependListener('request', (_req, res: ServerResponse) => {
    if (closing) res.setHeader('Connection', 'close');
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });
  const close = () =>
    (closing ??= (async () => {
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeIdleConnections();
      const force = setTimeout(() => http.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await closed;
      clearTimeout(force);
      keyCache.stop();
      if (!options.database) await database.close();
    })());

  const running: RunningServer = { origin: `http://${host}:${address.port}`, basePath, database, keys, keyCache, violations, http, close };
  if (bootstrapKey) running.bootstrapKey = bootstrapKey;
  return running;
}
