import type { Kysely, Selectable } from 'kysely';
import type { Database } from './schema.js';
import type { ListPetsQuery, NewPetRecord, Pet, PetPage, PetStore } from './types.js';

type PetRow = Selectable<Database['pets']>;

function toPet(row: Pick<PetRow, 'id' | 'name' | 'category_id' | 'status'>): Pet {
  return { id: row.id, name: row.name, categoryId: row.category_id, status: row.status };
}

const COLUMNS = ['id', 'name', 'category_id', 'status'] as const;

/** The animals, on either SQL dialect through one query path. */
export function createPetStore(db: Kysely<Database>): PetStore {
  return {
    async create(pet: NewPetRecord): Promise<Pet> {
      const row = await db
        .insertInto('pets')
        .values({ name: pet.name, category_id: pet.categoryId, status: pet.status, created_at: new Date().toISOString() })
        .returning(COLUMNS)
        .executeTakeFirstOrThrow();
      return toPet(row);
    },

    async get(id: number): Promise<Pet | undefined> {
      const row = await db.selectFrom('pets').select(COLUMNS).where('id', '=', id).executeTakeFirst();
      return row && toPet(row);
    },

    async list({ limit, status, afterId }: ListPetsQuery): Promise<PetPage> {
      let query = db.selectFrom('pets').select(COLUMNS);
      if (status !== undefined) query = query.where('status', '=', status);
      if (afterId !== undefined) query = query.where('id', '>', afterId);
      // One row more than asked tells whether a next page exists without a count.
      const rows = await query.orderBy('id', 'asc').limit(limit + 1).execute();
      return { pets: rows.slice(0, limit).map(toPet), hasMore: rows.length > limit };
    },
  };
}
