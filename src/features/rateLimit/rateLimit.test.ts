/**
 * Rate limits per API key (RATE_LIMIT, RATE_LIMIT_WINDOW_S, REDIS_URL; src/features/rateLimit/), on
 * the real server over HTTP on a real port, with every response checked against the contract:
 * RateLimit and RateLimit-Policy on each answer after the key check, counting down; the request
 * over the quota a 429 LimitError with Retry-After; counters per key; 401s neither counted nor
 * labelled; nothing at all when RATE_LIMIT is unset; the configuration's refusals; the same
 * counters in Redis when REDIS_URL is set (skipped otherwise), and fail open when Redis is not
 * there. The store does not matter to limits, so SQLite alone.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/env.js';
import { loadConfig } from '../../config.js';
import { readRateLimit } from './config.js';
import { type RateLimitConfig } from './config.js';
import { createLogger } from '../../shared/logger.js';
import { createRateLimiter } from './rateLimit.js';
import { startTestServer, type TestServer } from '../../../test/support/server.js';

const redisUrl = process.env.REDIS_URL || undefined;
if (!redisUrl) console.warn('[rate limits] REDIS_URL is not set: the Redis-backed tests are skipped (the in-memory ones still run).');

/** A port nothing listens on: Redis "down" without stopping anyone's Redis. */
const DEAD_REDIS = 'redis://127.0.0.1:1';

const RATE_LIMIT = /^"per-key";r=(\d+);t=(\d+)$/;

/** `r` and `t` of a response's RateLimit header (throws when it is absent or malformed). */
function remaining(response: Response): { r: number; t: number } {
  const match = RATE_LIMIT.exec(response.headers.get('ratelimit') ?? '');
  if (!match) throw new Error(`RateLimit header missing or malformed: ${response.headers.get('ratelimit')}`);
  return { r: Number(match[1]), t: Number(match[2]) };
}

/** A second API key on the same server, active at once. */
async function anotherKey(t: TestServer): Promise<string> {
  const { key } = await t.server.keys.create(`other ${Math.random()}`);
  await t.server.keyCache.refresh();
  return key;
}

const get = (t: TestServer, key: string, path = '/pets?limit=1') => t.request(path, { headers: { Authorization: `Bearer ${key}` } });

function noViolations(current: () => TestServer | undefined): void {
  afterEach(() => {
    expect(current()?.server.violations.splice(0) ?? [], 'responses that broke the contract').toEqual([]);
  });
}

describe('rate limits in memory (RATE_LIMIT=3, RATE_LIMIT_WINDOW_S=60)', () => {
  const QUOTA = 3;
  const WINDOW_S = 60;
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite', { env: { RATE_LIMIT: String(QUOTA), RATE_LIMIT_WINDOW_S: String(WINDOW_S), CORS_ORIGINS: '*' } }, { inProcess: true });
  });
  afterAll(async () => {
    await t?.close();
  });
  noViolations(() => t);

  it('each allowed answer carries the policy and counts down; the request over the quota is a 429 LimitError with Retry-After', async () => {
    const key = await anotherKey(t);
    for (let i = 1; i <= QUOTA; i++) {
      const response = await get(t, key);
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-policy')).toBe(`"per-key";q=${QUOTA};w=${WINDOW_S}`);
      const { r, t: reset } = remaining(response);
      expect(r).toBe(QUOTA - i);
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(WINDOW_S);
    }
    const refused = await get(t, key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await refused.json()) as { code: string; message: string; status: number };
    expect(body).toEqual({ code: 'rate_limited', message: expect.stringMatching(/^This API key is over its rate limit of 3 requests per 60 seconds; retry in \d+ seconds?\.$/), status: 429 });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= WINDOW_S).toBe(true);
    expect(remaining(refused).r).toBe(0);
    expect(refused.headers.get('ratelimit-policy')).toBe(`"per-key";q=${QUOTA};w=${WINDOW_S}`);
    // Still refused, on every operation: the budget is the key's, not the operation's.
    expect((await get(t, key, '/pets/1')).status).toBe(429);
  });

  it('counters are per API key: another key keeps its whole quota', async () => {
    const first = await anotherKey(t);
    const second = await anotherKey(t);
    for (let i = 0; i <= QUOTA; i++) await get(t, first);
    expect((await get(t, first)).status).toBe(429);
    const other = await get(t, second);
    expect(other.status).toBe(200);
    expect(remaining(other).r).toBe(QUOTA - 1);
  });

  it('a 401 is answered before limits: no RateLimit headers, and nothing counted', async () => {
    const key = await anotherKey(t);
    for (let i = 0; i < QUOTA + 2; i++) {
      const response = await t.request('/pets?limit=1', { headers: { Authorization: 'Bearer ask_notAKeyThatExistsAnywhere0000000000000000000' } });
      expect(response.status).toBe(401);
      expect(response.headers.get('ratelimit')).toBeNull();
      expect(response.headers.get('ratelimit-policy')).toBeNull();
    }
    const none = await t.request('/pets?limit=1', { auth: false });
    expect(none.status).toBe(401);
    expect(none.headers.get('ratelimit')).toBeNull();
    expect(remaining(await get(t, key)).r).toBe(QUOTA - 1);
  });

  it('errors after the key check count and carry the headers (400, 404), and a refused create costs no body parsing', async () => {
    const key = await anotherKey(t);
    const invalid = await get(t, key, '/pets?limit=0');
    expect(invalid.status).toBe(400);
    expect(remaining(invalid).r).toBe(QUOTA - 1);
    const missing = await get(t, key, '/pets/987654321');
    expect(missing.status).toBe(404);
    expect(remaining(missing).r).toBe(QUOTA - 2);
    await get(t, key);
    // Over the limit, a body that would be a 413 (and one that is not JSON at all) gets the 429: it is never read.
    const big = await t.request('/pets', { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: 'x'.repeat(100 * 1024) });
    expect(big.status).toBe(429);
    expect(((await big.json()) as { code: string }).code).toBe('rate_limited');
  });

  it('a 304 carries them too, and the ETag does not change with them', async () => {
    const key = await anotherKey(t);
    const first = await get(t, key);
    const etag = first.headers.get('etag') ?? '';
    const revalidated = await t.request('/pets?limit=1', { headers: { Authorization: `Bearer ${key}`, 'If-None-Match': etag } });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('etag')).toBe(etag);
    expect(remaining(revalidated).r).toBe(QUOTA - 2);
  });

  it('a browser on an allowed origin can read the headers (CORS exposes them, derived from the contract)', async () => {
    const key = await anotherKey(t);
    const response = await t.request('/pets?limit=1', { headers: { Authorization: `Bearer ${key}`, Origin: 'http://localhost:5173' } });
    expect(response.status).toBe(200);
    const exposed = (response.headers.get('access-control-expose-headers') ?? '').split(',').map((s) => s.trim().toLowerCase());
    expect(exposed).toEqual(expect.arrayContaining(['ratelimit', 'ratelimit-policy', 'retry-after']));
  });
});

describe('rate limits off (RATE_LIMIT unset, the default)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite', {}, { inProcess: true });
  });
  afterAll(async () => {
    await t?.close();
  });
  noViolations(() => t);

  it('no RateLimit header on any answer, however many requests', async () => {
    for (let i = 0; i < 20; i++) {
      const response = await t.request(i % 2 === 0 ? '/pets?limit=1' : '/pets?limit=0');
      expect(response.status).toBe(i % 2 === 0 ? 200 : 400);
      expect(response.headers.get('ratelimit')).toBeNull();
      expect(response.headers.get('ratelimit-policy')).toBeNull();
    }
  });
});

describe('RATE_LIMIT, RATE_LIMIT_WINDOW_S and REDIS_URL are checked like the other variables', () => {
  it('unset or empty: off; REDIS_URL alone is checked but turns nothing on', () => {
    expect(readRateLimit({})).toBeUndefined();
    expect(readRateLimit({ RATE_LIMIT: '' })).toBeUndefined();
    expect(readRateLimit({ REDIS_URL: 'redis://127.0.0.1:6379' })).toBeUndefined();
  });

  it('set: the quota, the window (60 s by default) and the Redis URL', () => {
    expect(readRateLimit({ RATE_LIMIT: '100' })).toEqual({ quota: 100, windowS: 60, redisUrl: undefined });
    expect(readRateLimit({ RATE_LIMIT: '5', RATE_LIMIT_WINDOW_S: '1', REDIS_URL: 'rediss://user:secret@cache.internal:6380/2' })).toEqual({
      quota: 5,
      windowS: 1,
      redisUrl: 'rediss://user:secret@cache.internal:6380/2',
    });
  });

  it.each<[Record<string, string>, RegExp]>([
    [{ RATE_LIMIT: '0' }, /^RATE_LIMIT=0 would refuse every request: unset RATE_LIMIT/],
    [{ RATE_LIMIT: 'ten' }, /^RATE_LIMIT must be a whole number from 1 to 1000000000; got "ten"/],
    [{ RATE_LIMIT: '-5' }, /^RATE_LIMIT must be a whole number/],
    [{ RATE_LIMIT: '1e3' }, /^RATE_LIMIT must be a whole number/],
    [{ RATE_LIMIT: '10000000000' }, /^RATE_LIMIT must be a whole number from 1 to 1000000000/],
    [{ RATE_LIMIT: '100', RATE_LIMIT_WINDOW_S: '0' }, /^RATE_LIMIT_WINDOW_S must be a whole number from 1 to 86400; got "0"/],
    [{ RATE_LIMIT: '100', RATE_LIMIT_WINDOW_S: '1.5' }, /^RATE_LIMIT_WINDOW_S must be a whole number/],
    [{ RATE_LIMIT_WINDOW_S: '60' }, /^RATE_LIMIT_WINDOW_S is set but RATE_LIMIT is not/],
    [{ RATE_LIMIT: '100', REDIS_URL: '127.0.0.1:6379' }, /^REDIS_URL must be a redis:\/\/ \(or rediss:\/\/\) URL/],
    [{ RATE_LIMIT: '100', REDIS_URL: 'http://127.0.0.1:6379' }, /^REDIS_URL must be a redis:\/\/ \(or rediss:\/\/\) URL; got a http: URL/],
    [{ REDIS_URL: 'postgres://127.0.0.1/x' }, /^REDIS_URL must be a redis:\/\//],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('fail open: Redis not there', () => {
  it('the limiter allows every request, uncounted and without headers, quickly, and reports each one', async () => {
    let failedOpen = 0;
    const config: RateLimitConfig = { quota: 1, windowS: 60, redisUrl: DEAD_REDIS };
    const limiter = await createRateLimiter({ config, logger: createLogger('silent'), onFailOpen: () => failedOpen++ });
    try {
      const started = Date.now();
      for (let i = 0; i < 5; i++) expect(await limiter.consume('caller')).toEqual({ allowed: true, headers: undefined });
      // Generous for a loaded machine: a refused connection fails at once, never the 200 ms command timeout per request.
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(failedOpen).toBe(5);
    } finally {
      await limiter.close();
    }
  });

  describe('the server keeps serving, and counts what it let through (METRICS_PORT)', () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer('sqlite', { env: { RATE_LIMIT: '1', REDIS_URL: DEAD_REDIS, METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' } }, { inProcess: true });
    });
    afterAll(async () => {
      await t?.close();
    });
    noViolations(() => t);

    it('200s past the quota, no RateLimit headers, animal_store_rate_limit_fail_open_total counts them', async () => {
      for (let i = 0; i < 4; i++) {
        const response = await t.request('/pets?limit=1');
        expect(response.status).toBe(200);
        expect(response.headers.get('ratelimit')).toBeNull();
      }
      const text = await (await fetch(`${t.server.featureOrigins.metrics ?? ''}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith('animal_store_rate_limit_fail_open_total '));
      expect(Number(line?.split(' ')[1])).toBe(4);
    });
  });
});

describe.skipIf(!redisUrl)('rate limits in Redis (REDIS_URL)', () => {
  const QUOTA = 4;
  let a: TestServer;
  beforeAll(async () => {
    a = await startTestServer('sqlite', { env: { RATE_LIMIT: String(QUOTA), RATE_LIMIT_WINDOW_S: '30', REDIS_URL: redisUrl } }, { inProcess: true });
  });
  afterAll(async () => {
    await a?.close();
  });
  noViolations(() => a);

  it('counts down in Redis and refuses past the quota, with the same headers as in memory', async () => {
    const key = await anotherKey(a);
    for (let i = 1; i <= QUOTA; i++) {
      const response = await get(a, key);
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-policy')).toBe(`"per-key";q=${QUOTA};w=30`);
      expect(remaining(response).r).toBe(QUOTA - i);
    }
    const refused = await get(a, key);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(remaining(refused).r).toBe(0);
    // Refused from memory until the window ends (inMemoryBlockOnConsumed), with the window's own end.
    const again = await get(a, key);
    expect(again.status).toBe(429);
    expect(remaining(again).t).toBeLessThanOrEqual(30);
  });
});
