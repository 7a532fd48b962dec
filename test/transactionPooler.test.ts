/**
 * Behind a pooler in transaction mode (Debian's PgBouncer, started here), a server connection
 * serves whichever client comes next after each transaction, so nothing a client leaves on it
 * may be relied on. Two such dependencies the store had, each proved here to fail and fixed:
 * named prepared statements (DATABASE_PREPARED_STATEMENTS=off turns them off) and the migration
 * lock (transaction-scoped, src/store/migrate.ts). The storage suite's `pgbouncer` target runs
 * every storage-backed test through such a pooler as well (test/support/server.ts).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../generated/migrations.js';
import { createScratchDatabase, type ScratchDatabase } from '../scripts/lib/scratchDatabase.js';
import { createApiKeyStore } from '../src/store/apiKeys.js';
import { openPostgres, type DatabaseHandle } from '../src/store/database.js';
import { pgbouncerMissing, startPgbouncer, type Pgbouncer } from './support/pgbouncer.js';

const missing = pgbouncerMissing();
if (missing !== undefined) console.warn(`test/transactionPooler.test.ts is skipped: ${missing}.`);
const adminUrl = process.env.DATABASE_URL ?? '';

async function query<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

describe.skipIf(missing !== undefined)('behind PgBouncer in transaction mode', () => {
  let pooler: Pgbouncer;
  let scratch: ScratchDatabase;
  beforeAll(async () => {
    scratch = await createScratchDatabase(adminUrl, 'pooler');
    // One server connection per database: every client's statements meet on it, so whatever one
    // leaves there the next one finds, deterministically.
    pooler = await startPgbouncer(adminUrl, { poolSize: 1 });
  });
  afterAll(async () => {
    await pooler?.stop();
    await scratch?.drop();
  });

  /** Opens the store through the pooler, lists the keys (a named statement when they are on), closes. */
  async function listKeysOnce(preparedStatements: boolean): Promise<void> {
    const handle = await openPostgres({ connection: pooler.through(scratch.url), preparedStatements });
    try {
      await createApiKeyStore(handle.db).list();
    } finally {
      await handle.close();
    }
  }

  it('named statements break the second client: its name already exists on the server connection (why DATABASE_PREPARED_STATEMENTS=off exists)', async () => {
    await listKeysOnce(true);
    await expect(listKeysOnce(true)).rejects.toMatchObject({ code: '42P05', message: expect.stringMatching(/prepared statement "animal_store_\d+" already exists/) });
  });

  it('with named statements off, any number of clients in turn and at once are served', async () => {
    for (let i = 0; i < 3; i++) await listKeysOnce(false);
    await Promise.all(Array.from({ length: 4 }, () => listKeysOnce(false)));
  });

  it('instances starting at once through the pooler apply each migration once and leave no lock held', async () => {
    const fresh = await createScratchDatabase(adminUrl, 'pooler');
    const wide = await startPgbouncer(adminUrl, { poolSize: 3 });
    const opened: DatabaseHandle[] = [];
    try {
      const starts = await Promise.allSettled(Array.from({ length: 5 }, () => openPostgres({ connection: wide.through(fresh.url), preparedStatements: false, maxConnections: 2 })));
      for (const start of starts) if (start.status === 'fulfilled') opened.push(start.value);
      expect(starts.filter((start) => start.status === 'rejected').map((start) => String((start as PromiseRejectedResult).reason))).toEqual([]);
      const applied = await query<{ name: string }>(fresh.url, 'select name from kysely_migration order by name');
      expect(applied.map((row) => row.name)).toEqual(Object.keys(migrations).sort());
      // A session-level lock left on a pooled server connection would stop the next start.
      const held = await query<{ count: string }>(adminUrl, `select count(*) from pg_locks l join pg_database d on d.oid = l.database where l.locktype = 'advisory' and d.datname = '${fresh.name}'`);
      expect(held[0]?.count).toBe('0');
    } finally {
      await Promise.all(opened.map((handle) => handle.close()));
      await wide.stop();
      await fresh.drop();
    }
  });
});
