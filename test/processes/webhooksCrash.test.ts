/**
 * Webhooks survive kill -9: the production bundle (as `npm start` runs it) on a SQLite file,
 * killed while deliveries are in flight and creates are arriving, then started again. Every event
 * whose change committed reaches the receiver after the restart (a claim the dead process held
 * is taken again once its lease ends), and none exists for a change that never committed: the
 * events delivered are exactly the animals stored.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledServerArgs, ensureBundle, root } from '../../scripts/lib/bundle.js';
import { startProcess, type RunningProcess } from '../../scripts/lib/processes.js';
import { createEndpointStore } from '../../src/features/webhooks/endpoints.js';
import { openSqlite } from '../../src/store/database.js';
import { startReceiver } from '../support/receiver.js';

async function start(env: Record<string, string>): Promise<{ proc: RunningProcess; base: string }> {
  const proc = startProcess(process.execPath, bundledServerArgs(), { cwd: root, env: { ...process.env, DATABASE_URL: '', NODE_ENV: 'production', ...env } });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const match = /listening on (http:\/\/\S+\/v1)/.exec(proc.output());
    if (match?.[1]) return { proc, base: match[1] };
    if (!proc.running() || Date.now() > deadline) {
      proc.child.kill('SIGKILL');
      throw new Error(`the server did not start:\n${proc.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('webhooks: kill -9 during delivery loses none', () => {
  beforeAll(async () => {
    console.info(`webhooks crash: ${await ensureBundle()}`);
  });
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-webhooks-crash-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every committed event is delivered after the restart, and no event exists for a create that never committed', async () => {
    const sqlitePath = join(dir, 'store.sqlite');
    const env = { PORT: '0', SQLITE_PATH: sqlitePath, LOG_LEVEL: 'warn', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_RETRY_SCHEDULE: '0.2,0.2,0.2,0.5,0.5,0.5,0.5,0.5', WEBHOOKS_POLL_MS: '100', WEBHOOKS_TIMEOUT_MS: '1000' };
    // Slow at first, so deliveries are in flight when the server dies.
    const receiver = await startReceiver(() => ({ status: 204, delayMs: 700 }));
    const first = await start({ ...env, LOG_LEVEL: 'info' });
    const database = await openSqlite(sqlitePath);
    let second: { proc: RunningProcess; base: string } | undefined;
    try {
      const key = /^\s+(ask_[A-Za-z0-9_-]{43})$/m.exec(first.proc.output())?.[1] ?? '';
      expect(key).not.toBe('');
      await createEndpointStore(database.db).add(receiver.url, undefined);
      const create = (i: number) =>
        fetch(`${first.base}/pets`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: `Crash ${i}`, categoryId: 1 }) }).then(
          (response) => response.status,
          () => 'cut' as const,
        );
      const early = await Promise.all(Array.from({ length: 10 }, (_, i) => create(i)));
      expect(early).toEqual(Array(10).fill(201));
      await receiver.until((all) => all.length >= 2);
      // More creates arriving as it dies: some commit unanswered, some never commit.
      const late = Array.from({ length: 40 }, (_, i) => create(10 + i));
      await new Promise((resolve) => setTimeout(resolve, 40));
      first.proc.child.kill('SIGKILL');
      await first.proc.exited;
      const outcomes = await Promise.all(late);
      receiver.answer = () => ({ status: 204 });

      const restarted = Date.now();
      second = await start(env);
      const { rows } = await sql<{ id: number }>`select id from pets order by id`.execute(database.db);
      const stored = rows.map((row) => Number(row.id));
      const createdIds = () => new Set(receiver.deliveries.map((d) => (JSON.parse(d.body) as { type: string; data: { id: number } })).filter((e) => e.type === 'pet.created').map((e) => e.data.id));
      await receiver.until(() => stored.every((id) => createdIds().has(id)), 30_000);
      expect([...createdIds()].sort((a, b) => a - b)).toEqual(stored);
      // Every delivery ends delivered: those the dead process had claimed, sent, but never heard answered, too.
      const unsettled = async () => Number((await sql<{ n: number }>`select count(*) as n from webhook_deliveries where state <> 'delivered'`.execute(database.db)).rows[0]?.n);
      await expect.poll(unsettled, { timeout: 30_000 }).toBe(0);
      const arrivedAfterRestart = receiver.deliveries.filter((d) => d.at >= restarted).length;
      const { rows: events } = await sql<{ n: number }>`select count(*) as n from webhook_events`.execute(database.db);
      expect(Number(events[0]?.n)).toBe(stored.length);
      // A duplicate (delivered, then the crash before it was recorded) carries the same webhook-id.
      expect(receiver.ids().size).toBe(stored.length);
      console.info(`kill -9: ${outcomes.filter((o) => o === 201).length} of 40 late creates answered, ${stored.length} animals stored; ${receiver.deliveries.length} deliveries for ${receiver.ids().size} events, ${arrivedAfterRestart} after the restart, all settled ${Date.now() - restarted} ms after it began`);
      expect(arrivedAfterRestart).toBeGreaterThan(0);
    } finally {
      first.proc.child.kill('SIGKILL');
      second?.proc.child.kill('SIGKILL');
      await database.close();
      await receiver.close();
    }
  }, 120_000);
});
