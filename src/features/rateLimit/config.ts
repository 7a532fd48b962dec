/** RATE_LIMIT, RATE_LIMIT_WINDOW_S and REDIS_URL, read at start (./feature.ts). */
import { ConfigError, readInteger, readUrl, type Env } from '../../shared/env.js';

export interface RateLimitConfig {
  /** Requests each API key may make per window. */
  quota: number;
  /** The window, in seconds: it starts with a key's first counted request. */
  windowS: number;
  /** redis:// or rediss:// to share the counters between instances; undefined: this instance's memory. */
  redisUrl: string | undefined;
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
export function readRateLimit(env: Env): RateLimitConfig | undefined {
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
