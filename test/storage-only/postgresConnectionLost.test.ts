/**
 * A pooled connection lost while a unit of work holds it between queries (the server restarted,
 * a proxy cut, an administrator's pg_terminate_backend). node-postgres then emits `error` on the
 * client, and pg-pool listens only while the client is idle in the pool: checked out, nobody
 * listened, and the unhandled event ended the process (test/robust/outage.test.ts saw the server
 * exit during a cut). The unit gets the failure from its next query; the server goes on, and the
 * next checkout gets a new connection. Real PostgreSQL (DATABASE_URL); skipped without.
 */
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, type ScratchDatabase } from '../../scripts/lib/scratchDatabase.js';
import { openPostgres, type DatabaseHandle } from '../../src/store/database.js';

const adminUrl = process.env.DATABASE_URL ?? '';
if (!adminUrl) console.warn('test/storage-only/postgresConnectionLost.test.ts is skipped: DATABASE_URL is not set.');

describe.skipIf(!adminUrl)('a pooled PostgreSQL connection lost while checked out', () => {
  let scratch: ScratchDatabase;
  let handle: DatabaseHandle;
  beforeAll(async () => {
    scratch = await createScratchDatabase(adminUrl, 'lost');
    handle = await openPostgres({ connection: scratch.url });
  });
  afterAll(async () => {
    await handle?.close();
    await scratch?.drop();
  });

  it('fails the unit that held it, leaves the process running, and the next query gets a new connection', async () => {
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', record);
    try {
      const held = handle.db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        const admin = new pg.Client({ connectionString: scratch.url });
        await admin.connect();
        try {
          await admin.query('select pg_terminate_backend($1)', [rows[0]?.pid]);
        } finally {
          await admin.end();
        }
        // The termination arrives while no query runs on the connection.
        await new Promise((resolve) => setTimeout(resolve, 300));
        await sql`select 1`.execute(trx);
      });
      await expect(held).rejects.toThrow();
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(handle.db);
      expect(rows[0]?.one).toBe(1);
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', record);
    }
  });
});
