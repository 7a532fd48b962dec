import type { Kysely, Selectable } from 'kysely';
import { createBatcher } from './batcher.js';
import { isUnavailable } from './database.js';
import { prepare, type Executor } from './prepared.js';
import type { Database } from './schema.js';
import type { ListPetsQuery, NewPetRecord, Pet, PetPage, PetStatus, PetStore } from './types.js';

type PetRow = Pick<Selectable<Database['pets']>, 'id' | 'name' | 'category_id' | 'status'>;

function toPet(row: PetRow): Pet {
  return { id: row.id, name: row.name, categoryId: row.category_id, status: row.status };
}

const COLUMNS = ['id', 'name', 'category_id', 'status'] as const;

/** The animals, on either SQL dialect through one query path. */
export function createPetStore(db: Kysely<Database>): PetStore {
  const byId = prepare<{ id: number }, PetRow>(db, (bind) => db.selectFrom('pets').select(COLUMNS).where('id', '=', bind('id')));
  type Insert = { name: string; categoryId: number; status: PetStatus; createdAt: string };
  const insert = prepare<Insert, PetRow>(db, (bind) =>
    db.insertInto('pets').values({ name: bind('name'), category_id: bind('categoryId'), status: bind('status'), created_at: bind('createdAt') }).returning(COLUMNS),
  );
  const insertOne = async (on: Executor, pet: NewPetRecord, createdAt: string): Promise<PetRow> => {
    const [row] = await insert({ ...pet, createdAt }, on);
    if (!row) throw new Error('INSERT … RETURNING returned no row');
    return row;
  };
  // One row more than asked tells whether a next page exists without a count. One compiled
  // query per combination of filters, so each has its own plan and prepared statement.
  type Page = { limit: number; status: PetStatus; afterId: number };
  const page = (withStatus: boolean, withAfter: boolean) =>
    prepare<Page, PetRow>(db, (bind) => {
      let query = db.selectFrom('pets').select(COLUMNS);
      if (withStatus) query = query.where('status', '=', bind('status'));
      if (withAfter) query = query.where('id', '>', bind('afterId'));
      return query.orderBy('id', 'asc').limit(bind('limit'));
    });
  const pages = { all: page(false, false), after: page(false, true), status: page(true, false), statusAfter: page(true, true) };

  // Group commit: creates that arrive while a commit is under way share the next one, so N
  // concurrent creates cost one transaction and one fsync instead of N.
  const inserts = createBatcher<NewPetRecord, PetRow>({
    maxBatch: 256,
    runBatch: (pets) =>
      db.transaction().execute(async (trx) => {
        const createdAt = new Date().toISOString();
        const rows: PetRow[] = [];
        for (const pet of pets) rows.push(await insertOne(trx, pet, createdAt));
        return rows;
      }),
    // A batch that failed for another reason is retried one by one: one bad row fails only its own request.
    runOne: (pet) => insertOne(db, pet, new Date().toISOString()),
    // When the database is down, retrying each item would only hammer it: all of them fail alike.
    retryOneByOne: (error) => !isUnavailable(error),
  });

  return {
    async create(pet) {
      return toPet(await inserts.add(pet));
    },

    async get(id) {
      const [row] = await byId({ id });
      return row && toPet(row);
    },

    async list({ limit, status, afterId }: ListPetsQuery): Promise<PetPage> {
      const run = status === undefined ? (afterId === undefined ? pages.all : pages.after) : afterId === undefined ? pages.status : pages.statusAfter;
      const rows = await run({ limit: limit + 1, status: status ?? 'available', afterId: afterId ?? 0 });
      return { pets: rows.slice(0, limit).map(toPet), hasMore: rows.length > limit };
    },
  };
}
