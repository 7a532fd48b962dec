/**
 * Fresh stores for the servers under test: a SQLite file or a PostgreSQL database of its own,
 * migrated and seeded with numbered animals, with an API key and the cursor secret read back.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { createApiKeyStore } from '../src/store/apiKeys.js';
import { openPostgres, openSqlite, redactUrl, type DatabaseHandle } from '../src/store/database.js';
import type { Database } from '../src/store/schema.js';
import type { ResourceTables } from '../generated/stores.js';
import { readSecret } from '../src/store/secrets.js';
import { createScratchDatabase } from '../scripts/lib/scratchDatabase.js';
import { trackDatabase } from './cleanup.js';

export interface PreparedStore {
  target: 'sqlite' | 'postgres';
  /** Environment for the server child. */
  env: Record<string, string>;
  key: string;
  /** The cursor secret, to make cursors for any position and to read the bench's own back. */
  secret: string;
  location: string;
}

const NAMES = ['Biscuit', 'Luna', 'Max', 'Bella', 'Charlie', 'Daisy', 'Milo', 'Coco', 'Rocky', 'Nala', 'Oscar', 'Willow', 'Pepper', 'Ziggy', 'Hazel', 'Gizmo', 'Maple', 'Rusty', 'Clover', 'Mochi'];
const STATUSES = ['available', 'pending', 'sold'] as const;
const EPOCH_MS = Date.UTC(2024, 0, 1);

/** The i-th seeded animal (1-based, so its id on a fresh store). The SQL seeder below matches it. */
function seedRow(i: number): { name: string; category_id: number; status: (typeof STATUSES)[number]; created_at: string } {
  return { name: `${NAMES[i % NAMES.length]!} ${i}`, category_id: 1 + (i % 5), status: STATUSES[i % 3]!, created_at: new Date(EPOCH_MS + i * 1000).toISOString() };
}

/** Multi-row inserts through Kysely in one transaction: the same path on SQLite and PostgreSQL. */
async function seedThroughKysely(core: Kysely<Database>, count: number): Promise<void> {
  const db = core.withTables<ResourceTables>();
  await db.transaction().execute(async (trx) => {
    for (let start = 1; start <= count; start += 1000) {
      const rows = [];
      for (let i = start; i < Math.min(start + 1000, count + 1); i++) rows.push(seedRow(i));
      await trx.insertInto('pets').values(rows).execute();
    }
  });
}

/** One INSERT … SELECT over a recursive CTE, in SQLite itself: a million rows in seconds. */
function seedThroughSqlite(path: string, count: number): void {
  const sqlite = new SQLite(path);
  try {
    sqlite.pragma('synchronous = OFF');
    sqlite
      .prepare(
        `with recursive seq(x) as (select 1 union all select x + 1 from seq where x < ?)
         insert into pets (name, category_id, status, created_at)
         select json_extract(?, '$[' || (x % ${NAMES.length}) || ']') || ' ' || x,
                1 + x % 5,
                case x % 3 when 0 then 'available' when 1 then 'pending' else 'sold' end,
                strftime('%Y-%m-%dT%H:%M:%fZ', ${EPOCH_MS / 1000} + x, 'unixepoch')
         from seq`,
      )
      .run(count, JSON.stringify(NAMES));
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    sqlite.close();
  }
}

async function finishStore(handle: DatabaseHandle, target: PreparedStore['target'], env: Record<string, string>): Promise<PreparedStore> {
  try {
    const { key } = await createApiKeyStore(handle.db).create('bench');
    const secret = await readSecret(handle.db, 'cursor');
    return { target, env, key, secret, location: handle.location };
  } finally {
    await handle.close();
  }
}

/** `how`: through Kysely like the server writes (load stores), or in SQL (the big store of the scale test). */
export async function prepareSqliteStore(dir: string, name: string, count: number, how: 'kysely' | 'sql'): Promise<PreparedStore> {
  const path = join(dir, `${name}.sqlite`);
  const handle = await openSqlite(path); // runs the migrations
  if (how === 'kysely') await seedThroughKysely(handle.db, count);
  const store = await finishStore(handle, 'sqlite', { SQLITE_PATH: path, DATABASE_URL: '' });
  if (how === 'sql') seedThroughSqlite(path, count);
  return store;
}

/** A copy of a SQLite store, closed and so checkpointed into its one file: the same animals and key for another server. */
export function copySqliteStore(store: PreparedStore, dir: string, name: string): PreparedStore {
  const path = join(dir, `${name}.sqlite`);
  copyFileSync(store.location, path);
  return { ...store, env: { ...store.env, SQLITE_PATH: path }, location: path };
}

/** A new database `animal_store_bench_<random>` on DATABASE_URL's server, dropped by cleanup. */
export async function preparePostgresStore(databaseUrl: string, count: number): Promise<PreparedStore> {
  const { name, url, drop } = await createScratchDatabase(databaseUrl, 'bench');
  trackDatabase(name, drop);
  const handle = await openPostgres({ connection: url });
  await seedThroughKysely(handle.db, count);
  const store = await finishStore(handle, 'postgres', { DATABASE_URL: url });
  return { ...store, location: `${redactUrl(url)} (database ${name})` };
}
