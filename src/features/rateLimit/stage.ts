/**
 * The rate limit, with RATE_LIMIT only (./rateLimit.ts, loaded then and only then): a call whose
 * key passed is counted against its caller, before the body is read, so a refused request costs
 * no body parsing. The RateLimit headers are set ahead, so every answer from here on carries
 * them (the handler's, a 400, a 413, a 500); over the limit, a 429.
 */
import { refuse } from '../../errors/refusal.js';
import { setAhead } from '../../http/respond.js';
import type { Stage } from '../../pipeline/stage.js';
import type { RateLimiter } from './rateLimit.js';

export function rateLimitStage(rateLimit: Pick<RateLimiter, 'consume'>): Stage {
  return {
    name: 'rate limit',
    run(exchange) {
      const { caller } = exchange;
      if (caller === undefined) return undefined;
      return rateLimit.consume(caller).then((verdict) => {
        const { headers } = verdict;
        if (headers !== undefined) for (const name in headers) setAhead(exchange, name, headers[name] as string);
        if (!verdict.allowed) throw refuse('rate_limited', 'overLimit', verdict.message, verdict.retryAfterS);
        return undefined;
      });
    },
  };
}
