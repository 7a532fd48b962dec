/**
 * Compiled queries (src/store/queries/prepared.ts) skip Kysely's executor outside transactions: a store
 * module's own view of the database, `db.withTables<Tables>()` as src/store/resource.ts tells it to
 * take, must keep that path. (It once did not: every getPet paid a Kysely round, about a quarter of
 * the server's CPU per request, and every answer was still right, so only a test of the path sees it.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openSqlite, type DatabaseHandle } from '../../src/store/database.js';
import { directRunnerOf, prepare } from '../../src/store/queries/prepared.js';
import type { Database } from '../../src/store/schema.js';

type Tables = {
  examples_prepared: { id: number; label: string };
};

describe('prepared queries on SQLite', () => {
  let dir: string;
  let handle: DatabaseHandle;
  let db: Kysely<Database & Tables>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'animal-store-prepared-'));
    handle = await openSqlite(join(dir, 'store.sqlite'));
    db = handle.db.withTables<Tables>();
    await sql`create table examples_prepared (id integer primary key, label text not null)`.execute(db);
    await sql`insert into examples_prepared (id, label) values (1, 'one'), (2, 'two')`.execute(db);
  });

  afterAll(async () => {
    await handle?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a module's withTables view has its database's direct runner", () => {
    expect(directRunnerOf(handle.db)).toBeTypeOf('function');
    expect(directRunnerOf(db)).toBe(directRunnerOf(handle.db));
  });

  it("runs outside Kysely's executor, and inside a transaction through it (seeing the transaction's rows)", async () => {
    const byId = prepare<{ id: number }, Tables['examples_prepared']>(db, (bind) => db.selectFrom('examples_prepared').selectAll().where('id', '=', bind('id')));
    const executed = vi.spyOn(db.getExecutor(), 'executeQuery');
    try {
      expect(await byId({ id: 2 })).toEqual([{ id: 2, label: 'two' }]);
      expect(executed).not.toHaveBeenCalled();
      await db.transaction().execute(async (trx) => {
        await sql`insert into examples_prepared (id, label) values (3, 'three')`.execute(trx);
        expect(await byId({ id: 3 }, trx)).toEqual([{ id: 3, label: 'three' }]);
      });
    } finally {
      executed.mockRestore();
    }
  });
});
