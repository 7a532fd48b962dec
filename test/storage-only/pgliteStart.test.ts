/**
 * The PGlite test store opens however long PGlite takes to start, and a start that never
 * completes ends in a fresh instance or a clear error rather than a hook that hangs.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { startPglite, type Startable } from '../support/pglite.js';
import { openTestStorage } from '../support/server.js';

// A real PGlite whose readiness comes well after the pool's connect bound, as it does when other
// test runs load the machine: the case that left the connect waiting forever.
vi.mock('@electric-sql/pglite', async (importOriginal) => {
  const actual = await importOriginal<typeof import('@electric-sql/pglite')>();
  const { CONNECT_TIMEOUT_MS: bound } = await import('../../src/store/database.js');
  class SlowToStart extends actual.PGlite {
    constructor() {
      super();
      const started = this.waitReady;
      Object.defineProperty(this, 'waitReady', { value: started.then(() => delay(2 * bound)) });
    }
  }
  return { ...actual, PGlite: SlowToStart };
});

describe('the PGlite test store', () => {
  it('opens when PGlite becomes ready only after the pool would have given up connecting', async () => {
    const storage = await openTestStorage('pglite');
    try {
      await storage.database.ping();
      const tables = await storage.database.db.introspection.getTables();
      expect(tables.map((t) => t.name)).toContain('pets');
    } finally {
      await storage.dispose();
    }
  }, 240_000);
});

/** Stands for a PGlite: `ready` says whether its start ever completes. */
function fakePglite(ready: boolean): Startable {
  const waitReady = ready ? Promise.resolve() : new Promise<void>(() => undefined);
  // Like PGlite's, close() waits for the start to complete.
  return { waitReady, close: () => waitReady };
}

describe('startPglite', () => {
  it('gives up an instance that never becomes ready for a fresh one, saying so', async () => {
    const stuck = fakePglite(false);
    const fresh = fakePglite(true);
    const made = [stuck, fresh];
    const warnings: string[] = [];
    const started = await startPglite({ create: () => made.shift()!, readyLimitMs: 200, attempts: 2, warn: (m) => warnings.push(m) });
    expect(started).toBe(fresh);
    expect(made).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/^PGlite was not ready within 200 ms \(attempt 1 of 2\): abandoned it, starting a fresh one$/)]);
  });

  it('fails with a clear error when no instance becomes ready', async () => {
    const warnings: string[] = [];
    let created = 0;
    const attempt = startPglite({
      create: () => {
        created++;
        return fakePglite(false);
      },
      readyLimitMs: 200,
      attempts: 2,
      warn: (m) => warnings.push(m),
    });
    await expect(attempt).rejects.toThrow(/^PGlite was not ready within 200 ms, 2 times in a row/);
    expect(created).toBe(2);
    expect(warnings).toHaveLength(1);
  });

  it('passes on a start that failed instead of retrying it', async () => {
    const broken: Startable = { waitReady: Promise.reject(new Error('initdb failed')), close: () => Promise.resolve() };
    let created = 0;
    const attempt = startPglite({
      create: () => {
        created++;
        return broken;
      },
      readyLimitMs: 60_000,
      attempts: 2,
    });
    await expect(attempt).rejects.toThrow('initdb failed');
    expect(created).toBe(1);
  });
});
