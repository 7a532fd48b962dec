/**
 * Rate limits across instances and through a Redis outage, on the server `npm start` ships (child
 * processes of the bundle):
 *
 *   - Two instances on one Redis (REDIS_URL) draw on one budget per key: requests of one key,
 *     alternated between them several at a time, get exactly RATE_LIMIT successes in total and
 *     429s for the rest.
 *   - A Redis of the test's own (never the machine's) killed mid-run: every request is still
 *     answered, 0 5xx (fail open: uncounted, without RateLimit headers); once that Redis is back on
 *     its port, counting resumes by itself and the quota refuses again.
 *
 * The first needs REDIS_URL (CI starts Redis; skipped otherwise); the second needs `redis-server`
 * on PATH (skipped otherwise).
 */
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startProcess, stopProcess, waitForPort, type RunningProcess } from '../../scripts/lib/processes.js';
import { send, type HttpResponse } from './support/http.js';
import { killAll, sqliteStore, startServerProcess, stopServer, type ServerProcess, type Store } from './support/server.js';

const redisUrl = process.env.REDIS_URL || undefined;
if (!redisUrl) console.warn('[rate limits] REDIS_URL is not set: the two-instance shared-budget test is skipped.');

function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const redisServerFound = hasRedisServer();
if (!redisServerFound) console.warn('[rate limits] redis-server is not on PATH: the Redis-outage test is skipped.');

const stores: Store[] = [];
const redises: RunningProcess[] = [];
afterAll(async () => {
  await killAll();
  await Promise.all(redises.map((proc) => stopProcess(proc, 'SIGKILL', 5_000)));
  await Promise.all(stores.map((store) => store.dispose()));
});

/** Runs `task` over 0..count-1 with at most `width` at once. */
async function pooled(count: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/** Two instances on one fresh SQLite file (the second finds the first's key there). */
async function twoInstances(env: Record<string, string>): Promise<{ a: ServerProcess; b: ServerProcess; key: string }> {
  const store = sqliteStore('rate-limit');
  stores.push(store);
  const a = await startServerProcess(store, env);
  const key = a.bootstrapKey;
  if (!key) throw new Error('the first instance printed no key');
  const b = await startServerProcess(store, env);
  return { a, b, key };
}

/** A redis-server of this test's own on `port`, nothing persisted; resolves once it accepts connections. */
async function startRedis(port: number): Promise<RunningProcess> {
  const proc = startProcess('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  redises.push(proc);
  const deadline = Date.now() + 10_000;
  if (!(await waitForPort('127.0.0.1', port, () => Date.now() > deadline || !proc.running()))) {
    throw new Error(`redis-server did not listen on ${port}:\n${proc.output()}`);
  }
  return proc;
}

const RATE_LIMIT = /^"per-key";r=(\d+);t=(\d+)$/;

describe.skipIf(!redisUrl)('two instances on one Redis', () => {
  const QUOTA = 60;
  const REQUESTS = 180;
  const IN_FLIGHT = 8;

  it('share one budget per key: exactly the quota succeeds over both, the rest is 429', async () => {
    const { a, b, key } = await twoInstances({ RATE_LIMIT: String(QUOTA), RATE_LIMIT_WINDOW_S: '120', REDIS_URL: redisUrl ?? '' });
    const statuses = new Map<number, number>();
    const allowedBy = { a: 0, b: 0 };
    await pooled(REQUESTS, IN_FLIGHT, async (i) => {
      const server = i % 2 === 0 ? a : b;
      const response = await send(`${server.base}/pets?limit=1`, { key });
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      if (response.status === 200) allowedBy[server === a ? 'a' : 'b']++;
      expect(response.headers['ratelimit-policy']).toBe(`"per-key";q=${QUOTA};w=120`);
      expect(String(response.headers.ratelimit)).toMatch(RATE_LIMIT);
    });
    const allowed = statuses.get(200) ?? 0;
    const limited = statuses.get(429) ?? 0;
    console.log(`shared rate limit: quota ${QUOTA}, 2 instances, allowed ${allowed}, limited ${limited} (allowed by instance: ${allowedBy.a} + ${allowedBy.b}; ${REQUESTS} requests, ${IN_FLIGHT} in flight)`);
    expect(Object.fromEntries(statuses)).toEqual({ 200: QUOTA, 429: REQUESTS - QUOTA });
    // Both instances let some through: the budget really was drawn on from both sides.
    expect(allowedBy.a).toBeGreaterThan(0);
    expect(allowedBy.b).toBeGreaterThan(0);
    await Promise.all([stopServer(a), stopServer(b)]);
  });
});

describe.skipIf(!redisServerFound)('Redis stopped mid-run', () => {
  // Above what the paced load below sends in its 3 s (about 6 × 40 per second), so that every request
  // of it reaches Redis: a key over its quota is refused from the instance's memory until its
  // window ends, Redis or not.
  const QUOTA = 1_000;
  const IN_FLIGHT = 6;
  const PAUSE_MS = 25;

  it('costs no 5xx (fail open), and limits resume once Redis is back', async () => {
    const port = await freePort();
    let redis = await startRedis(port);
    const store = sqliteStore('rate-limit-outage');
    stores.push(store);
    const server = await startServerProcess(store, { RATE_LIMIT: String(QUOTA), RATE_LIMIT_WINDOW_S: '300', REDIS_URL: `redis://127.0.0.1:${port}` });
    const key = server.bootstrapKey ?? '';

    const tally = { requests: 0, fiveXx: 0, failures: 0, counted: 0, uncounted: 0, allowedCounted: 0, slowestMs: 0 };
    const ask = async (): Promise<HttpResponse | undefined> => {
      const started = Date.now();
      tally.requests++;
      try {
        const response = await send(`${server.base}/pets?limit=1`, { key, timeoutMs: 10_000 });
        tally.slowestMs = Math.max(tally.slowestMs, Date.now() - started);
        if (response.status >= 500) tally.fiveXx++;
        if (response.headers.ratelimit === undefined) tally.uncounted++;
        else tally.counted++;
        if (response.status === 200 && response.headers.ratelimit !== undefined) tally.allowedCounted++;
        return response;
      } catch {
        tally.failures++;
        return undefined;
      }
    };
    /** Keeps IN_FLIGHT requests going until `stop()` says so. */
    const load = (stop: () => boolean) =>
      Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (!stop()) {
            await ask();
            await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
          }
        }),
      );

    // Counted while Redis is up.
    const before = await ask();
    expect(before?.status).toBe(200);
    expect(String(before?.headers.ratelimit)).toMatch(RATE_LIMIT);

    // Under load: Redis killed (SIGKILL, no goodbye) half-way through 3 s.
    const loadEnds = Date.now() + 3_000;
    const running = load(() => Date.now() > loadEnds);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await stopProcess(redis, 'SIGKILL', 5_000);
    const killedAt = Date.now();
    await running;
    const afterKill = { ...tally };
    console.log(
      `redis down: ${tally.requests} requests, ${tally.fiveXx} 5xx, ${tally.failures} transport failures, ` +
        `${tally.counted} counted and ${tally.uncounted} served uncounted (fail open), slowest ${tally.slowestMs} ms ` +
        `(${IN_FLIGHT} clients pausing ${PAUSE_MS} ms for 3 s, Redis killed after 1 s)`,
    );
    expect(afterKill.fiveXx).toBe(0);
    expect(afterKill.failures).toBe(0);
    expect(afterKill.uncounted).toBeGreaterThan(0);

    // Redis back on the same port, empty: counting resumes without a restart of the server.
    redis = await startRedis(port);
    const restartedAt = Date.now();
    const allowedBefore = tally.allowedCounted;
    let resumedAfterMs: number | undefined;
    while (Date.now() - restartedAt < 15_000) {
      const response = await ask();
      if (response?.headers.ratelimit !== undefined) {
        resumedAfterMs = Date.now() - restartedAt;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(resumedAfterMs, 'RateLimit headers within 15 s of Redis coming back').toBeDefined();
    // And the quota refuses again: spend it, a few at a time, until a 429. The new Redis started
    // empty, so exactly the quota is allowed (counted) from the restart on.
    let spent = 0;
    let refused = false;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (!refused && spent <= QUOTA + IN_FLIGHT) {
          spent++;
          const response = await ask();
          if (response?.status === 429) refused = true;
        }
      }),
    );
    const allowedAfterRestart = tally.allowedCounted - allowedBefore;
    console.log(
      `redis back: counting resumed ${resumedAfterMs} ms after Redis restarted (${restartedAt - killedAt} ms after the kill); ` +
        `${allowedAfterRestart} counted and allowed since, then 429 again (quota ${QUOTA}); in all ${tally.requests} requests, ${tally.fiveXx} 5xx`,
    );
    expect(refused).toBe(true);
    expect(allowedAfterRestart).toBe(QUOTA);
    expect(tally.fiveXx).toBe(0);
    expect(tally.failures).toBe(0);
    await stopServer(server);
  });
});
