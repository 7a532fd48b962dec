/**
 * The sandbox's throwaway store (scripts/sandbox.ts): empties every resource's tables (whatever
 * src/store/resources/ holds, a resource added later too) and every Idempotency-Key record, then
 * puts the seed animals back with the ids they have in the contract's examples. The server's own
 * tables stay: API keys, secrets, the record of deprecated calls, the migrations. SQLite only: the
 * sandbox never runs on PostgreSQL (it refuses DATABASE_URL).
 */
import { sql } from 'kysely';
import type { Pet } from '../../shared/schemas.js';
import type { DatabaseHandle } from '../../store/database.js';
import { CALLS_TABLE } from '../deprecation/calls.js';
import { ENDPOINTS_TABLE } from '../webhooks/tables.js';
import type { NewPetRecord, Tables as PetTables } from '../../store/resources/pets.js';

export interface SandboxSeeds {
  /** Animals stored with the ids they carry (the examples of listPets' 200). */
  pets: readonly Pet[];
  /** Animals created after them, getting the next ids (createPet's request examples not among `pets`). */
  created: readonly NewPetRecord[];
}

export interface SandboxStore {
  /** Empties every resource and the Idempotency-Key records and stores the seeds again; ids of later creates continue after the seeds'. Returns the animals stored. */
  reset(): Promise<number>;
}

/** The server's own tables (the keys', the secrets', the deprecated calls', Kysely's) and the receivers subscribed to its events, which a reset keeps. */
const KEPT = new Set(['api_keys', 'server_secrets', CALLS_TABLE, 'kysely_migration', 'kysely_migration_lock', 'sqlite_sequence', ENDPOINTS_TABLE]);

export function createSandboxStore(database: DatabaseHandle, seeds: SandboxSeeds): SandboxStore {
  if (database.dialect !== 'sqlite') throw new Error('the sandbox store is SQLite only');
  const db = database.db.withTables<PetTables>();
  return {
    reset: () =>
      db.transaction().execute(async (trx) => {
        const createdAt = new Date().toISOString();
        // Every table but the server's own: each resource's, and the Idempotency-Key records (one
        // recorded before the reset would replay an answer about a row that no longer exists).
        const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(trx);
        const emptied = rows.map((row) => row.name).filter((name) => !KEPT.has(name));
        // A resource whose table references another's (an order's pet) is emptied in any order: checked at commit.
        await sql`pragma defer_foreign_keys = on`.execute(trx);
        for (const name of emptied) await sql`delete from ${sql.table(name)}`.execute(trx);
        // Ids start again: AUTOINCREMENT keeps its high-water mark in sqlite_sequence.
        for (const name of emptied) await sql`delete from sqlite_sequence where name = ${name}`.execute(trx);
        for (const pet of seeds.pets) {
          await trx.insertInto('pets').values({ id: pet.id, name: pet.name, category_id: pet.categoryId, status: pet.status, created_at: createdAt }).execute();
        }
        for (const pet of seeds.created) {
          await trx.insertInto('pets').values({ name: pet.name, category_id: pet.categoryId, status: pet.status, created_at: createdAt }).execute();
        }
        return seeds.pets.length + seeds.created.length;
      }),
  };
}
