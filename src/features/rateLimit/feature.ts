/**
 * The rate limit, with RATE_LIMIT only (./config.ts; the limiter and ioredis, with REDIS_URL,
 * are loaded then and only then): a call whose key passed is counted against its caller, before
 * the body is read, so a refused request costs no body parsing. The RateLimit headers are set
 * ahead, so every answer from here on carries them (the handler's, a 400, a 413, a 500); over the
 * limit, a 429.
 */
import { refuse } from '../../errors/refusal.js';
import { setAhead } from '../../http/respond.js';
import type { Stage } from '../../http/stage.js';
import type { Feature } from '../feature.js';
import type { RateLimiter } from './rateLimit.js';
import { readRateLimit } from './config.js';

export const rateLimit: Feature = {
  name: 'rateLimit',
  configure(env) {
    const config = readRateLimit(env);
    if (config === undefined) return undefined;
    return async (host) => {
      const { createRateLimiter } = await import('./rateLimit.js');
      const limiter = await createRateLimiter({ config, logger: host.logger, onFailOpen: () => host.observers.rateLimitFailOpen?.() });
      return {
        stages: [{ before: 'body', stage: rateLimitStage(limiter) }],
        close: () => limiter.close(),
      };
    };
  },
};

function rateLimitStage(limiter: Pick<RateLimiter, 'consume'>): Stage {
  return {
    name: 'rate limit',
    run(exchange, next) {
      const { caller } = exchange;
      if (caller === undefined) return next(exchange);
      return limiter.consume(caller).then((verdict) => {
        const { headers } = verdict;
        if (headers !== undefined) for (const name in headers) setAhead(exchange, name, headers[name] as string);
        if (!verdict.allowed) throw refuse('rate_limited', 'overLimit', verdict.message, verdict.retryAfterS);
        return next(exchange);
      });
    },
  };
}
