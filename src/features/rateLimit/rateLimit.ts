/**
 * Rate limits per API key (RATE_LIMIT requests per RATE_LIMIT_WINDOW_S seconds), counted by
 * rate-limiter-flexible: in this instance's memory, or in Redis (REDIS_URL) so that every instance
 * draws on one budget per key. Loaded only when RATE_LIMIT is set (src/server.ts imports this
 * module on demand), so with limits off nothing of it, the library or ioredis costs anything.
 *
 * The window is fixed and starts with a key's first counted request (the library's model: one
 * counter with a time to live), so `t` in `RateLimit` is when that counter expires, the same on
 * every instance with Redis. A refused request is counted too, but never moves the window.
 *
 * Fail open: when Redis cannot answer (down, refusing, slower than COMMAND_TIMEOUT_MS) the request
 * is served without being counted and without RateLimit headers, a warning is logged at most every
 * WARN_EVERY_MS, and `onFailOpen` is called (a metrics counter). Limits protect the service; an
 * outage of the store that serves them must not become an outage of the service. After a failure
 * the store is left alone for RETRY_STORE_MS (requests fail open without waiting, so a silent
 * Redis costs one timeout per instance per second, not one per request), then tried again: limits
 * come back by themselves once Redis answers.
 */
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import type { RateLimitConfig } from './config.js';
import type { Logger } from '../../shared/logger.js';

/** The policy's name in both headers (the spec's pattern: `"[a-z0-9-]{1,32}"`). */
const POLICY = 'per-key';
/** Redis' keys: `animal-store:rate:<caller>`, the caller being the key's SHA-256 (never the key). */
const KEY_PREFIX = 'animal-store:rate';
/** A healthy Redis on the private network answers in about a millisecond; past this it counts as down. */
const COMMAND_TIMEOUT_MS = 200;
const CONNECT_TIMEOUT_MS = 1_000;
/** How long the start waits for Redis before serving without it (fail open, logged). */
const START_WAIT_MS = 1_000;
const RETRY_STORE_MS = 1_000;
const WARN_EVERY_MS = 10_000;
/** Reconnection back-off: 100 ms, 200 ms, … at most a second between attempts. */
const reconnectDelay = (attempt: number): number => Math.min(attempt * 100, 1_000);

export type RateLimitVerdict =
  /** Counted and within the quota; `headers` undefined: not counted (the store failed: fail open). */
  | { allowed: true; headers: Record<string, string> | undefined }
  /** Over the quota: answer 429 with these headers, `Retry-After` and `message`. */
  | { allowed: false; headers: Record<string, string>; retryAfterS: number; message: string };

export interface RateLimiter {
  /** Counts one request of `caller` (an opaque id of its API key) and says whether it may proceed. Never rejects. */
  consume(caller: string): Promise<RateLimitVerdict>;
  /** Disconnects from Redis (nothing to do in memory). */
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  config: RateLimitConfig;
  logger: Logger;
  /** Called once per request allowed without counting because the store failed (a metrics counter). */
  onFailOpen?: (() => void) | undefined;
}

/** Whole seconds until `ms` have passed, rounded up: a header never promises a reset too early. */
const seconds = (ms: number): number => Math.max(0, Math.ceil(ms / 1000));

/** The library's RateLimiterRes as the spec's headers (components.headers RateLimit, RateLimit-Policy). */
function headersOf(result: RateLimiterRes, policy: string): Record<string, string> {
  return { RateLimit: `"${POLICY}";r=${result.remainingPoints};t=${seconds(result.msBeforeNext)}`, 'RateLimit-Policy': policy };
}

/** Where REDIS_URL points, for the log: host and port only (the URL may carry a password). */
function redisAddress(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '6379'}`;
}

/**
 * An ioredis client that fails fast: no offline queue (a command while disconnected fails at once
 * instead of waiting for a reconnection), a short command timeout, and no retry or resend of a
 * command whose answer was lost (a resent count would count twice). It reconnects by itself.
 */
async function connectRedis(url: string, logger: Logger, warn: (error: unknown) => void): Promise<Redis> {
  // Through module.exports (the default export): esbuild's bundle (npm start) exposes none of
  // ioredis' named exports, Node's loader both.
  const { default: ioredis } = await import('ioredis');
  const client = new ioredis.Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: reconnectDelay,
  });
  // Without a listener ioredis prints every failed reconnection to stderr; ours is throttled.
  client.on('error', warn);
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), START_WAIT_MS);
    client.once('ready', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  if (ready) logger.info({ redis: redisAddress(url) }, 'rate limits: counters shared in Redis');
  else logger.warn({ redis: redisAddress(url) }, `rate limits: Redis not ready within ${START_WAIT_MS} ms; serving without limits until it is`);
  return client;
}

export async function createRateLimiter(options: RateLimiterOptions): Promise<RateLimiter> {
  const { config, logger } = options;
  const policy = `"${POLICY}";q=${config.quota};w=${config.windowS}`;
  const perWindow = `${config.quota} request${config.quota === 1 ? '' : 's'} per ${config.windowS} second${config.windowS === 1 ? '' : 's'}`;

  // Fail-open bookkeeping: when the store last failed, since when, and how many requests went uncounted.
  let skipUntil = 0;
  let failingSince = 0;
  let lastWarning = 0;
  let uncounted = 0;
  const warn = (error: unknown): void => {
    const now = Date.now();
    if (failingSince === 0) failingSince = now;
    if (now - lastWarning < WARN_EVERY_MS) return;
    lastWarning = now;
    logger.warn({ err: error, uncountedRequests: uncounted }, 'rate limits: the counter store failed; serving without limits (fail open) until it answers');
  };

  let limiter: RateLimiterAbstract;
  let redis: Redis | undefined;
  if (config.redisUrl === undefined) {
    limiter = new RateLimiterMemory({ keyPrefix: KEY_PREFIX, points: config.quota, duration: config.windowS });
  } else {
    redis = await connectRedis(config.redisUrl, logger, warn);
    limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: KEY_PREFIX,
      points: config.quota,
      duration: config.windowS,
      // A closed connection fails at once, without a round trip.
      rejectIfRedisNotReady: true,
      // A key over its quota is refused from memory until its window ends: a client hammering
      // past its limit costs Redis nothing more. The window's end comes from Redis, so it is the
      // same on every instance.
      inMemoryBlockOnConsumed: config.quota + 1,
    });
  }

  const failOpen = (error: unknown): RateLimitVerdict => {
    uncounted++;
    warn(error);
    options.onFailOpen?.();
    return { allowed: true, headers: undefined };
  };

  return {
    async consume(caller) {
      if (skipUntil !== 0) {
        if (Date.now() < skipUntil) return failOpen(undefined);
        skipUntil = 0;
      }
      try {
        const result = await limiter.consume(caller);
        if (failingSince !== 0) {
          logger.info({ failedForMs: Date.now() - failingSince, uncountedRequests: uncounted }, 'rate limits: the counter store answers again; limits apply');
          failingSince = 0;
          lastWarning = 0;
          uncounted = 0;
        }
        return { allowed: true, headers: headersOf(result, policy) };
      } catch (outcome) {
        // The library rejects with a RateLimiterRes when the quota is used up, and with an Error when the store failed.
        if (!(outcome instanceof RateLimiterRes)) {
          skipUntil = Date.now() + RETRY_STORE_MS;
          return failOpen(outcome);
        }
        const retryAfterS = Math.max(1, seconds(outcome.msBeforeNext));
        return {
          allowed: false,
          headers: headersOf(outcome, policy),
          retryAfterS,
          message: `This API key is over its rate limit of ${perWindow}; retry in ${retryAfterS} second${retryAfterS === 1 ? '' : 's'}.`,
        };
      }
    },
    async close() {
      // disconnect, not quit: a dead Redis would keep quit waiting, and nothing is left to send.
      redis?.disconnect();
    },
  };
}
