/**
 * The server's configuration, read from the environment at start: its own settings here, and
 * each feature's by its folder (src/features/<name>/config.ts), so a feature's variables live
 * beside its code; a bad value is a ConfigError naming the variable.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { configureFeatures, type ConfiguredFeature } from './features/index.js';
import { ConfigError, readHost, readInteger, readOneOf, readUrl, type Env } from './shared/env.js';
import { LOG_LEVELS, type LogLevel } from './shared/logger.js';
import { projectRoot } from './shared/paths.js';
import type { OAuthSettings } from './auth/tokens.js';

export interface Config {
  port: number;
  host: string;
  /** postgres://… when set; otherwise the embedded SQLite file at `sqlitePath`. */
  databaseUrl: string | undefined;
  /**
   * DATABASE_PREPARED_STATEMENTS: whether PostgreSQL queries are sent as named prepared statements
   * (parsed and planned once per connection, the fastest on a direct connection). Off for a pooler
   * in transaction mode (PgBouncer before 1.21, or with max_prepared_statements=0; RDS Proxy,
   * Supavisor), where a name prepared on one server connection does not exist on the next one a
   * query lands on. Undefined: on. Optional so configurations built in code need not name it.
   */
  databasePreparedStatements?: boolean | undefined;
  sqlitePath: string;
  logLevel: LogLevel;
  /** Check every response against the spec and answer 500 on a mismatch (test and dev). */
  validateResponses: boolean;
  /** How often each instance reloads the active API keys: the bound on revocation. */
  keyRefreshMs: number;
  /**
   * Slow-client bounds (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS): a client that has not sent all
   * of its headers within `headersTimeoutMs`, or its whole request within `requestTimeoutMs`, of
   * the request's first byte gets a 408 and loses the connection, so a client dribbling bytes
   * cannot hold a connection for ever.
   */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /**
   * MAX_CONNECTIONS: open client connections at most. At the bound a new connection displaces the
   * oldest one with no request in progress, so idle connections cannot starve the server of file
   * descriptors (src/transport/connections.ts). Default: the process's open-file limit
   * less room for the database, logs and files (defaultMaxConnections).
   */
  maxConnections: number;
  /**
   * SHUTDOWN_DRAIN_MS: on SIGTERM or SIGINT, how long /readyz answers 503 while everything else
   * is still served (each answer with `Connection: close`) before the listener closes; 0: no
   * drain. Undefined (unset or empty): 5 s when /readyz was asked in the last minute (a balancer
   * is watching), else none (src/transport/drain.ts says why).
   */
  shutdownDrainMs?: number | undefined;
  /**
   * OAUTH_ISSUER, OAUTH_AUDIENCE: for a spec with `oauth2` or `openIdConnect` schemes, the issuer
   * of the access tokens (an `oauth2` scheme's; an `openIdConnect` one names its own by its
   * `openIdConnectUrl`) and the audience they must be for. Without them such a spec does not start.
   */
  oauth?: OAuthSettings | undefined;
  /**
   * The features their settings turn on (src/features/: each reads its own variables), in the
   * order they start. A bad value of any is a ConfigError at load, before anything opens.
   */
  features: readonly ConfiguredFeature[];
}

/** 10 s is ample for any honest client's headers; 30 s for a 64 KiB body on a slow link. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Descriptors kept for the database (a pool of 10 on PostgreSQL), the log, the docs and Node itself. */
export const RESERVED_FILE_DESCRIPTORS = 256;

/** The soft limit on open files (/proc/self/limits on Linux); undefined where it cannot be read or is unlimited. */
export function openFileLimit(limits = '/proc/self/limits'): number | undefined {
  try {
    const soft = /^Max open files\s+(\d+)/m.exec(readFileSync(limits, 'utf8'))?.[1];
    return soft === undefined ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}

/** Below the open-file limit by RESERVED_FILE_DESCRIPTORS (a quarter of a small limit); 10,000 where the limit is unknown. */
export function defaultMaxConnections(limit = openFileLimit()): number {
  if (limit === undefined) return 10_000;
  return Math.max(16, limit - Math.min(RESERVED_FILE_DESCRIPTORS, Math.floor(limit / 4)));
}

/** A drain longer than this would outlast any supervisor's patience (Kubernetes waits 30 s by default). */
const MAX_SHUTDOWN_DRAIN_MS = 300_000;

/** Reads and checks the environment; a bad value is an error naming the variable. */
export function loadConfig(env: Env = process.env): Config {
  const mode = readOneOf(env, 'NODE_ENV', ['production', 'development', 'test'], 'production');
  const validate = readOneOf(env, 'VALIDATE_RESPONSES', ['true', 'false'], mode === 'production' ? 'false' : 'true');
  const host = readHost(env, 'HOST');
  const port = readInteger(env, 'PORT', 8080, 0, 65535);
  const headersTimeoutMs = readInteger(env, 'HEADERS_TIMEOUT_MS', DEFAULT_HEADERS_TIMEOUT_MS, 1_000, 120_000);
  const requestTimeoutMs = readInteger(env, 'REQUEST_TIMEOUT_MS', DEFAULT_REQUEST_TIMEOUT_MS, 1_000, 600_000);
  // node:http refuses to start otherwise: the headers are part of the request.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(`HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not be larger than REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  }
  return {
    port,
    host,
    databaseUrl: readUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:'], 'postgres://user@host:5432/db', false), // postgres:///db: the local socket
    databasePreparedStatements: readOneOf(env, 'DATABASE_PREPARED_STATEMENTS', ['on', 'off'], 'on') === 'on',
    sqlitePath: resolve(projectRoot, env.SQLITE_PATH || 'data/animal-store.sqlite'),
    logLevel: readOneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    validateResponses: validate === 'true',
    keyRefreshMs: readInteger(env, 'KEY_REFRESH_MS', 2000, 100, 4000),
    headersTimeoutMs,
    requestTimeoutMs,
    maxConnections: readInteger(env, 'MAX_CONNECTIONS', defaultMaxConnections(), 1, 1_000_000),
    shutdownDrainMs: env.SHUTDOWN_DRAIN_MS === undefined || env.SHUTDOWN_DRAIN_MS === '' ? undefined : readInteger(env, 'SHUTDOWN_DRAIN_MS', 0, 0, MAX_SHUTDOWN_DRAIN_MS),
    oauth: { issuer: readUrl(env, 'OAUTH_ISSUER', ['https:', 'http:'], 'https://issuer.example', true), audience: env.OAUTH_AUDIENCE || undefined },
    features: configureFeatures(env),
  };
}
