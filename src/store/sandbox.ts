/**
 * The sandbox's throwaway store (scripts/sandbox.ts): puts the seed animals back, with the ids
 * they have in the contract's examples, after deleting every animal and every Idempotency-Key
 * record. SQLite only: the sandbox never runs on PostgreSQL (it refuses DATABASE_URL).
 */
import { sql } from 'kysely';
import type { Pet } from '../schemas.js';
import type { DatabaseHandle } from './database.js';
import type { NewPetRecord, Tables as PetTables } from './resources/pets.js';

export interface SandboxSeeds {
  /** Animals stored with the ids they carry (the examples of listPets' 200). */
  pets: readonly Pet[];
  /** Animals created after them, getting the next ids (createPet's request examples not among `pets`). */
  created: readonly NewPetRecord[];
}

export interface SandboxStore {
  /** Deletes every animal and Idempotency-Key record and stores the seeds again; ids of later creates continue after the seeds'. Returns the animals stored. */
  reset(): Promise<number>;
}

export function createSandboxStore(database: DatabaseHandle, seeds: SandboxSeeds): SandboxStore {
  if (database.dialect !== 'sqlite') throw new Error('the sandbox store is SQLite only');
  const db = database.db.withTables<PetTables>();
  return {
    reset: () =>
      db.transaction().execute(async (trx) => {
        const createdAt = new Date().toISOString();
        await trx.deleteFrom('pets').execute();
        // A key recorded before the reset would replay a pet that no longer exists.
        await trx.deleteFrom('idempotency_keys').execute();
        // Ids start again from the seeds: AUTOINCREMENT keeps its high-water mark in sqlite_sequence.
        await sql`delete from sqlite_sequence where name = 'pets'`.execute(trx);
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
