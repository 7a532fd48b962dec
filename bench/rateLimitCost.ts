/**
 * `npx tsx bench/rateLimitCost.ts`: what counting one request costs with RATE_LIMIT set, in
 * process and without HTTP: the hook src/http/api.ts runs per request with a valid key (the
 * limiter's consume, awaited, and the two RateLimit headers set on a real ServerResponse),
 * against the same loop without it (a fresh ServerResponse and one await of a settled promise, as
 * postSecurityHandler awaits anyway). Median of 5 runs, µs per request.
 *
 * With REDIS_URL set it also times the Redis limiter: one request at a time (the round trip a
 * request waits for), and IN_FLIGHT at a time (the CPU this process spends per request).
 *
 * `measureRateLimitCost()` is what the bench's report calls; run alone, this prints it.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { createRateLimiter, type RateLimiter } from '../src/http/rateLimit.js';
import { createLogger } from '../src/logger.js';

const N = 100_000;
const REDIS_N = 5_000;
const RUNS = 5;
const IN_FLIGHT = 50;
/** Distinct API keys the requests come from (the counters' map holds one entry each). */
const CALLERS = 100;
/** Never reached: the allowed path is what nearly every request takes. */
const QUOTA = 1_000_000_000;

export interface RateLimitCost {
  /** µs per request the memory limiter adds in process (median of RUNS), over the same work without it. */
  memoryUs: number;
  /** µs per request of that loop without limits (the baseline the difference is taken from). */
  baselineUs: number;
  /** With REDIS_URL: µs a request waits for its Redis round trip (one at a time), and this process's CPU µs per request with IN_FLIGHT at a time. */
  redis?: { roundTripUs: number; cpuUsPerRequest: number; inFlight: number };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const callers = Array.from({ length: CALLERS }, (_, i) => `caller-${i}`.padEnd(64, '0'));
const settled = Promise.resolve();

function responses(count: number): ServerResponse[] {
  return Array.from({ length: count }, () => new ServerResponse(new IncomingMessage(new Socket())));
}

/** µs per request over N fresh responses, with or without the limiter's hook. */
async function perRequest(limiter: RateLimiter | undefined): Promise<number> {
  const list = responses(N);
  const started = performance.now();
  for (let i = 0; i < N; i++) {
    const res = list[i] as ServerResponse;
    if (limiter === undefined) {
      await settled;
      continue;
    }
    const verdict = await limiter.consume(callers[i % CALLERS] as string);
    const { headers } = verdict;
    if (headers !== undefined) for (const name in headers) res.setHeader(name, headers[name] as string);
  }
  return ((performance.now() - started) * 1000) / N;
}

async function measureMemory(): Promise<Pick<RateLimitCost, 'memoryUs' | 'baselineUs'>> {
  const limiter = await createRateLimiter({ config: { quota: QUOTA, windowS: 60, redisUrl: undefined }, logger: createLogger('silent') });
  await perRequest(limiter); // warm up: counters created, code optimised
  await perRequest(undefined);
  const on: number[] = [];
  const off: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    off.push(await perRequest(undefined));
    on.push(await perRequest(limiter));
  }
  await limiter.close();
  return { memoryUs: median(on) - median(off), baselineUs: median(off) };
}

async function measureRedis(redisUrl: string): Promise<NonNullable<RateLimitCost['redis']>> {
  const limiter = await createRateLimiter({ config: { quota: QUOTA, windowS: 60, redisUrl }, logger: createLogger('warn') });
  try {
    for (let i = 0; i < 500; i++) await limiter.consume(callers[i % CALLERS] as string); // warm up: connection, script loaded
    const started = performance.now();
    for (let i = 0; i < REDIS_N; i++) {
      const verdict = await limiter.consume(callers[i % CALLERS] as string);
      if (verdict.headers === undefined) throw new Error('Redis did not answer: the limiter failed open');
    }
    const roundTripUs = ((performance.now() - started) * 1000) / REDIS_N;
    let next = 0;
    const cpu = process.cpuUsage();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < REDIS_N) await limiter.consume(callers[next++ % CALLERS] as string);
      }),
    );
    const used = process.cpuUsage(cpu);
    return { roundTripUs, cpuUsPerRequest: (used.user + used.system) / REDIS_N, inFlight: IN_FLIGHT };
  } finally {
    await limiter.close();
  }
}

/** The in-process cost of rate limiting per request; the Redis figures too when `redisUrl` is given. */
export async function measureRateLimitCost(redisUrl: string | undefined = process.env.REDIS_URL || undefined): Promise<RateLimitCost> {
  const cost: RateLimitCost = await measureMemory();
  if (redisUrl !== undefined) cost.redis = await measureRedis(redisUrl);
  return cost;
}

/** One line per figure, for the bench's output and for running this file alone. */
export function describeRateLimitCost(cost: RateLimitCost): string[] {
  const lines = [`rate limit (memory): +${cost.memoryUs.toFixed(3)} µs per request (loop without it ${cost.baselineUs.toFixed(3)} µs; median of ${RUNS} runs of ${N.toLocaleString('en')}, ${CALLERS} keys)`];
  if (cost.redis) {
    lines.push(`rate limit (Redis): ${cost.redis.roundTripUs.toFixed(1)} µs round trip per request one at a time; ${cost.redis.cpuUsPerRequest.toFixed(1)} µs CPU per request with ${cost.redis.inFlight} in flight`);
  }
  return lines;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of describeRateLimitCost(await measureRateLimitCost())) console.log(line);
  process.exit(0);
}
