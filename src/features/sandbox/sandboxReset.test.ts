/**
 * The sandbox's reset (src/features/sandbox/store.ts) empties every resource, whatever src/store/resources/
 * holds, a resource added later included, and the Idempotency-Key records; it keeps the server's
 * own tables (API keys, secrets), and puts the seed animals back with their ids. On a real SQLite
 * file, with a made-up resource's table that references pets.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApiKeyStore } from '../../store/apiKeys.js';
import { openSqlite, type DatabaseHandle } from '../../store/database.js';
import { createSandboxStore } from './store.js';

let dir = '';
let database: DatabaseHandle;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'animal-store-sandbox-reset-'));
  database = await openSqlite(join(dir, 'store.sqlite'));
});
afterAll(async () => {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

it('empties every resource (one added later too) and the Idempotency-Key records, keeps the keys, and restores the seeds', async () => {
  const { db } = database;
  await sql`pragma foreign_keys = on`.execute(db);
  await sql`create table examples_orders (id integer primary key autoincrement, pet_id integer not null references pets (id), quantity integer not null)`.execute(db);
  const store = createSandboxStore(database, { pets: [{ id: 1, name: 'Biscuit', categoryId: 2, status: 'available' }], created: [{ name: 'Rex', categoryId: 1, status: 'pending' }] });
  expect(await store.reset()).toBe(2);
  await sql`insert into examples_orders (pet_id, quantity) values (1, 3), (2, 1)`.execute(db);
  const key = await createApiKeyStore(db).create('kept');
  expect(await store.reset()).toBe(2);
  const count = async (table: string) => Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db)).rows[0]?.n);
  expect(await count('examples_orders')).toBe(0);
  expect(await count('idempotency_records')).toBe(0);
  expect(await count('pets')).toBe(2);
  expect((await createApiKeyStore(db).list()).map((k) => k.id)).toContain(key.info.id);
  // Ids start again: the next order is 1, and the pets have their seed ids.
  await sql`insert into examples_orders (pet_id, quantity) values (2, 5)`.execute(db);
  expect((await sql<{ id: number }>`select id from examples_orders`.execute(db)).rows).toEqual([{ id: 1 }]);
  expect((await sql<{ id: number; name: string }>`select id, name from pets order by id`.execute(db)).rows).toEqual([{ id: 1, name: 'Biscuit' }, { id: 2, name: 'Rex' }]);
});
