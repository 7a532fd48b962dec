import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Interval } from 'luxon';
import { isoInstant } from './instant.js';
import { projectRoot } from './paths.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

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
   * CORS_ORIGINS: the browser origins allowed to call the API from another origin (exact
   * `scheme://host[:port]` strings as browsers send them in `Origin`), or `*` for any. Undefined
   * (unset or empty, the production default): no CORS headers at all, so browsers allow only
   * same-origin pages. Optional so configurations built in code need not name it.
   */
  corsOrigins?: CorsOrigins | undefined;
  /**
   * METRICS_PORT: the port of a second listener serving only GET /metrics (Prometheus text), never
   * the public port. Undefined (unset or empty, the default): no metrics at all, no listener, no
   * cost per request. `0` picks a free port (tests).
   */
  metricsPort?: number | undefined;
  /** METRICS_HOST: the metrics listener's address, 127.0.0.1 by default (only with METRICS_PORT). */
  metricsHost?: string | undefined;
  /**
   * RATE_LIMIT, RATE_LIMIT_WINDOW_S, REDIS_URL: requests per API key per window. Undefined (RATE_LIMIT
   * unset or empty, the default): no limits, no headers, nothing loaded, no cost per request.
   */
  rateLimit?: RateLimitConfig | undefined;
  /**
   * DEPRECATION_BROWNOUTS: windows of time in which every deprecated operation answers 410 Gone,
   * so its callers notice before the sunset date. Empty (unset, the default): none.
   */
  brownouts?: readonly Brownout[] | undefined;
  /**
   * SHUTDOWN_DRAIN_MS: on SIGTERM or SIGINT, how long /readyz answers 503 while everything else
   * is still served (each answer with `Connection: close`) before the listener closes; 0: no
   * drain. Undefined (unset or empty): 5 s when /readyz was asked in the last minute (a balancer
   * is watching), else none (src/transport/drain.ts says why).
   */
  shutdownDrainMs?: number | undefined;
  /**
   * OpenTelemetry traces, asked for by the SDK's own variables (readTracing): a SERVER span per
   * request and a CLIENT span per query, exported over OTLP/HTTP (src/features/tracing/tracing.ts).
   * Undefined (the default): nothing of OpenTelemetry is loaded, no cost per request.
   */
  tracing?: TracingConfig | undefined;
}

export interface TracingConfig {
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL: `http/protobuf` (the OTLP default) or `http/json`. */
  protocol: 'http/protobuf' | 'http/json';
}

/** A brownout window, [start, end) in ms since the epoch, and how it was written. */
export interface Brownout {
  start: number;
  end: number;
  /** The ISO 8601 interval as normalised (`start/end`, UTC). */
  text: string;
}

export interface RateLimitConfig {
  /** Requests each API key may make per window. */
  quota: number;
  /** The window, in seconds: it starts with a key's first counted request. */
  windowS: number;
  /** redis:// or rediss:// to share the counters between instances; undefined: this instance's memory. */
  redisUrl: string | undefined;
}

/** `*` (any origin) or the exact origins allowed. */
export type CorsOrigins = '*' | readonly string[];

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

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got "${raw}"`);
  }
  return Number(raw);
}

function readOneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}; got "${raw}"`);
  return raw as T;
}

/**
 * A URL setting (DATABASE_URL, REDIS_URL) of one of `protocols`: checked at start, so a typo stops
 * the start instead of failing later (for ever, where the feature fails open). `hostRequired`:
 * whether a URL without a host is refused (REDIS_URL) or means a local socket (DATABASE_URL).
 */
function readUrl(env: Env, name: string, protocols: readonly string[], example: string, hostRequired: boolean): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const [first, ...others] = protocols.map((p) => `${p}//`);
  const kinds = others.length > 0 ? `${first} (or ${others.join(', ')})` : `${first}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a ${kinds} URL, e.g. "${example}"`);
  }
  if (!protocols.includes(url.protocol)) throw new ConfigError(`${name} must be a ${kinds} URL; got a ${url.protocol} URL`);
  if (hostRequired && url.hostname === '') throw new ConfigError(`${name} names no host; write it as ${protocols[0]}//host:port, e.g. "${example}"`);
  return raw;
}

/**
 * CORS_ORIGINS: `*` alone, or a comma-separated list of origins written exactly as a browser sends
 * them (`Origin` is compared byte for byte): http or https, lower-case host, no default port, no
 * path, no trailing slash. Anything else would never match and is refused, naming the fix.
 */
function readCorsOrigins(env: Env): CorsOrigins | undefined {
  const raw = env.CORS_ORIGINS?.trim();
  if (raw === undefined || raw === '') return undefined;
  const entries = raw.split(',').map((entry) => entry.trim());
  if (entries.includes('*')) {
    if (entries.length > 1) throw new ConfigError(`CORS_ORIGINS must be "*" alone or a list of origins, not both; got "${raw}"`);
    return '*';
  }
  const origins: string[] = [];
  for (const entry of entries) {
    if (entry === '') throw new ConfigError(`CORS_ORIGINS has an empty entry (a stray comma?); got "${raw}"`);
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new ConfigError(`CORS_ORIGINS: "${entry}" is not an http(s) origin; write each as scheme://host[:port], e.g. "https://app.example.com"`);
    }
    if (url.origin !== entry) {
      throw new ConfigError(`CORS_ORIGINS: "${entry}" never matches a browser's Origin header; write it as "${url.origin}" (no path, no trailing slash, lower-case host, no default port)`);
    }
    if (!origins.includes(entry)) origins.push(entry);
  }
  return origins;
}

/** A host name or IP address to bind (HOST, METRICS_HOST). */
function readHost(env: Env, name: string): string {
  const raw = env[name];
  const host = raw === undefined || raw === '' ? '127.0.0.1' : raw;
  if (!/^[A-Za-z0-9.:-]+$/.test(host)) throw new ConfigError(`${name} must be a host name or IP address; got "${host}"`);
  return host;
}

/**
 * METRICS_PORT and METRICS_HOST: off unless METRICS_PORT is set; METRICS_HOST alone is refused
 * (it would look like metrics were on). The port must not be the API's: /metrics is never served
 * on the public listener.
 */
function readMetrics(env: Env, port: number): { metricsPort?: number; metricsHost?: string } {
  const metricsPort = env.METRICS_PORT === undefined || env.METRICS_PORT === '' ? undefined : readInteger(env, 'METRICS_PORT', 0, 0, 65535);
  if (metricsPort === undefined) {
    if (env.METRICS_HOST !== undefined && env.METRICS_HOST !== '') throw new ConfigError('METRICS_HOST is set but METRICS_PORT is not: set METRICS_PORT to serve metrics, or unset METRICS_HOST');
    return {};
  }
  if (metricsPort !== 0 && metricsPort === port) throw new ConfigError(`METRICS_PORT must differ from PORT (${port}): metrics are never served on the API's port`);
  return { metricsPort, metricsHost: readHost(env, 'METRICS_HOST') };
}

/** The most the RateLimit headers' patterns (10 digits) and the memory counters comfortably hold. */
const MAX_RATE_LIMIT = 1_000_000_000;
/** A day: longer windows are a quota, not a rate limit. */
const MAX_RATE_LIMIT_WINDOW_S = 86_400;

/**
 * RATE_LIMIT (requests per key per window), RATE_LIMIT_WINDOW_S (default 60) and REDIS_URL: off
 * unless RATE_LIMIT is set, so existing deployments and load tests see no change.
 * RATE_LIMIT_WINDOW_S alone is refused (it would look like limits were on). REDIS_URL alone is
 * checked but unused: the environment may set it for other tools (CI exports it for every test).
 */
function readRateLimit(env: Env): RateLimitConfig | undefined {
  const redisUrl = readUrl(env, 'REDIS_URL', ['redis:', 'rediss:'], 'redis://127.0.0.1:6379', true);
  if (env.RATE_LIMIT === undefined || env.RATE_LIMIT === '') {
    if (env.RATE_LIMIT_WINDOW_S !== undefined && env.RATE_LIMIT_WINDOW_S !== '') {
      throw new ConfigError('RATE_LIMIT_WINDOW_S is set but RATE_LIMIT is not: set RATE_LIMIT (requests per key per window) to limit rates, or unset RATE_LIMIT_WINDOW_S');
    }
    return undefined;
  }
  if (/^0+$/.test(env.RATE_LIMIT)) throw new ConfigError('RATE_LIMIT=0 would refuse every request: unset RATE_LIMIT (or leave it empty) to turn rate limits off');
  const quota = readInteger(env, 'RATE_LIMIT', 0, 1, MAX_RATE_LIMIT);
  const windowS = readInteger(env, 'RATE_LIMIT_WINDOW_S', 60, 1, MAX_RATE_LIMIT_WINDOW_S);
  return { quota, windowS, redisUrl };
}

/**
 * DEPRECATION_BROWNOUTS: comma-separated ISO 8601 intervals, `start/end` or `start/duration`
 * (`2030-06-01T10:00:00Z/PT1H`), parsed by luxon; a time without an offset is UTC. Sorted by start.
 */
function readBrownouts(env: Env): Brownout[] {
  const raw = env.DEPRECATION_BROWNOUTS?.trim();
  if (!raw) return [];
  const brownouts: Brownout[] = [];
  for (const entry of raw.split(',').map((part) => part.trim())) {
    if (entry === '') throw new ConfigError(`DEPRECATION_BROWNOUTS has an empty entry (a stray comma?); got "${raw}"`);
    const interval = Interval.fromISO(entry, { zone: 'utc' });
    if (!interval.isValid || !interval.start || !interval.end) {
      throw new ConfigError(`DEPRECATION_BROWNOUTS: "${entry}" is not an ISO 8601 interval (${interval.invalidExplanation ?? 'invalid'}); write each as start/end or start/duration, e.g. "2030-06-01T10:00:00Z/PT1H"`);
    }
    if (interval.isEmpty()) throw new ConfigError(`DEPRECATION_BROWNOUTS: "${entry}" is an empty interval; give it a duration`);
    const start = interval.start.toMillis();
    const end = interval.end.toMillis();
    brownouts.push({ start, end, text: `${isoInstant(start)}/${isoInstant(end)}` });
  }
  return brownouts.sort((a, b) => a.start - b.start);
}

/** A drain longer than this would outlast any supervisor's patience (Kubernetes waits 30 s by default). */
const MAX_SHUTDOWN_DRAIN_MS = 300_000;

/**
 * Traces are on when the OpenTelemetry SDK's own variables name an OTLP endpoint
 * (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT), or when OTEL_SDK_DISABLED=false
 * asks for the SDK at its default endpoint (http://localhost:4318). A stock SDK is on unless
 * disabled; this server is off unless asked, so a deployment that sets none of them loads nothing.
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turns traces off whatever else is set. The
 * SDK reads the rest itself (headers, timeout, sampler, service name, batching); what is checked
 * here is what it would only warn about at run time while losing every span: a malformed endpoint,
 * an exporter or protocol this server does not ship (gRPC).
 */
function readTracing(env: Env): TracingConfig | undefined {
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase();
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (disabled === 'true' || exporter === 'none') return undefined;
  const tracesEndpoint = readUrl(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['http:', 'https:'], 'http://collector:4318/v1/traces', true);
  const endpoint = readUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:'], 'http://collector:4318', true);
  if (tracesEndpoint === undefined && endpoint === undefined && disabled !== 'false') return undefined;
  if (exporter !== undefined && exporter !== '' && exporter !== 'otlp') throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp or none; got "${env.OTEL_TRACES_EXPORTER ?? ''}"`);
  const name = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = readOneOf(env, name, ['http/protobuf', 'http/json', 'grpc'], 'http/protobuf');
  if (protocol === 'grpc') throw new ConfigError(`${name}=grpc is not supported: use http/protobuf (the default, to the collector's OTLP/HTTP port, 4318) or http/json`);
  return { protocol };
}

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
    corsOrigins: readCorsOrigins(env),
    ...readMetrics(env, port),
    rateLimit: readRateLimit(env),
    brownouts: readBrownouts(env),
    shutdownDrainMs: env.SHUTDOWN_DRAIN_MS === undefined || env.SHUTDOWN_DRAIN_MS === '' ? undefined : readInteger(env, 'SHUTDOWN_DRAIN_MS', 0, 0, MAX_SHUTDOWN_DRAIN_MS),
    tracing: readTracing(env),
  };
}
