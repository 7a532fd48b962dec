/**
 * SQLite rolls a transaction back by itself on some errors (the disk full, an I/O error). The
 * error a caller sees must be that cause, which the server answers 503 (src/shared/unavailable.ts),
 * not Kysely's failed ROLLBACK after it ("no transaction is active"), which it answered 500
 * (test/robust/diskFull.test.ts met it on a real full disk). `max_page_count` fills the file here.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/shared/unavailable.js';
import { openSqlite, type DatabaseHandle } from '../../src/store/database.js';

describe('a SQLite transaction that fills the file', () => {
  let dir: string;
  let handle: DatabaseHandle;
  let db: Kysely<unknown>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'animal-store-full-'));
    handle = await openSqlite(join(dir, 'store.sqlite'));
    db = handle.db as unknown as Kysely<unknown>;
    await sql`create table examples_filler (bytes blob not null)`.execute(db);
  });

  afterAll(async () => {
    await handle?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('rejects with SQLITE_FULL (unavailable: a 503), and the next transaction commits once there is room', async () => {
    const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(db);
    await sql.raw(`pragma max_page_count = ${Number(rows[0]?.page_count) + 4}`).execute(db);
    const filling = db.transaction().execute(async (trx) => {
      for (let i = 0; i < 64; i++) await sql`insert into examples_filler (bytes) values (${Buffer.alloc(4096)})`.execute(trx);
    });
    const error = await filling.then(() => undefined, (reason: unknown) => reason);
    expect(error).toMatchObject({ code: 'SQLITE_FULL' });
    expect(isDatabaseUnavailable(error)).toBe(true);
    await sql`pragma max_page_count = 1073741823`.execute(db);
    await db.transaction().execute((trx) => sql`insert into examples_filler (bytes) values (${Buffer.alloc(16)})`.execute(trx));
    const { rows: counted } = await sql<{ n: number }>`select count(*) as n from examples_filler`.execute(db);
    expect(Number(counted[0]?.n)).toBe(1);
  });
});
