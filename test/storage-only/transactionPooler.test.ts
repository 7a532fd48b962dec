/**
 * Behind a pooler in transaction mode (Debian's PgBouncer, started here), a server connection
 * serves whichever client comes next after each transaction, so nothing a client leaves on it
 * may be relied on. Two such dependencies the store had, each proved here to fail and fixed:
 * named prepared statements (DATABASE_PREPARED_STATEMENTS=off turns them off) and the migration
 * lock (transaction-scoped, src/store/migrate.ts). The storage suite's `pgbouncer` target runs
 * every storage-backed test through such a pooler as well (test/support/server.ts). And the
 * schema-of-its-own recipe of docs/operations.md, followed here as written, survives the pooler
 * where the `options=-c search_path` one is refused.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../generated/migrations.js';
import { createScratchDatabase, type ScratchDatabase } from '../../scripts/lib/scratchDatabase.js';
import { randomBytes } from 'node:crypto';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { openPostgres, type DatabaseHandle } from '../../src/store/database.js';
import { explainDatabaseError } from '../../src/store/databaseErrors.js';
import { pgbouncerMissing, startPgbouncer, type Pgbouncer } from '../../scripts/lib/pgbouncer.js';

const missing = pgbouncerMissing();
if (missing !== undefined) console.warn(`test/storage-only/transactionPooler.test.ts is skipped: ${missing}.`);
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

  it('npm run keys: create, create, list through the pooler with DATABASE_PREPARED_STATEMENTS=off; without it the next run is told to set it', async () => {
    const fresh = await createScratchDatabase(adminUrl, 'pooler');
    const tsx = join(process.cwd(), 'node_modules', '.bin', 'tsx');
    const keys = (setting: string, ...args: string[]) =>
      promisify(execFile)(tsx, ['scripts/operators/keys.ts', ...args], { env: { ...process.env, DATABASE_URL: pooler.through(fresh.url), DATABASE_PREPARED_STATEMENTS: setting, LOG_LEVEL: '' } }).then(
        ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
        (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
      );
    try {
      for (const name of ['first', 'second']) expect(await keys('off', 'create', name)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^ask_/) });
      expect((await keys('off', 'list')).stdout).toMatch(/^1\s+first[\s\S]*^2\s+second/m);
      // The report, replayed: named statements, two runs, one server connection between them.
      expect((await keys('on', 'list')).code).toBe(0);
      const second = await keys('on', 'list');
      expect(second.code).toBe(1);
      expect(second.stderr.trim().split('\n')).toEqual([expect.stringMatching(/already exists: named prepared statements meet a pooler in transaction mode; set DATABASE_PREPARED_STATEMENTS=off/)]);
    } finally {
      await fresh.drop();
    }
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

  describe('a schema of its own (docs/operations.md#a-schema-of-its-own)', () => {
    const role = `animal_store_app_${randomBytes(4).toString('hex')}`;
    let shared: ScratchDatabase;
    let pooled: Pgbouncer;
    beforeAll(async () => {
      shared = await createScratchDatabase(adminUrl, 'shared');
      // The recipe, as an administrator runs it once: a role, its schema, the role's search_path.
      await query(adminUrl, `create role ${role} login`);
      await query(shared.url, `create schema animal_store authorization ${role}`);
      await query(shared.url, `alter role ${role} in database ${shared.name} set search_path = animal_store`);
      pooled = await startPgbouncer(adminUrl, { users: [role] });
    });
    afterAll(async () => {
      await pooled?.stop();
      await shared?.drop();
      await query(adminUrl, `drop role if exists ${role}`);
    });

    const asRole = (url: string) => {
      const u = new URL(url);
      u.username = role;
      return u.toString();
    };

    it("the role's own search_path, set once, survives the pooler: the tables land in its schema and the start says so", async () => {
      const handle = await openPostgres({ connection: pooled.through(asRole(shared.url)), preparedStatements: false });
      try {
        expect(handle.schema).toBe('animal_store');
        await createApiKeyStore(handle.db).create('recipe');
      } finally {
        await handle.close();
      }
      const tables = await query<{ table_schema: string; table_name: string }>(shared.url, "select table_schema, table_name from information_schema.tables where table_schema in ('public', 'animal_store') order by 1, 2");
      expect(new Set(tables.map((t) => t.table_schema))).toEqual(new Set(['animal_store']));
      expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['api_keys', 'pets', 'kysely_migration']));
    });

    it('the options=-c search_path recipe is refused by the pooler, and the line points to this one', async () => {
      const url = `${pooled.through(asRole(shared.url))}?options=${encodeURIComponent('-c search_path=animal_store')}`;
      const failure = await openPostgres({ connection: url, preparedStatements: false }).then(
        async (handle) => {
          await handle.close();
          return undefined;
        },
        (error: unknown) => explainDatabaseError(error, url),
      );
      expect(failure).toMatch(/unsupported startup parameter: options.*set the schema on the role instead \(docs\/operations\.md#a-schema-of-its-own\)/);
    });
  });
});
