/**
 * The animals: their table, and the store handlers reach as `deps.pets` (src/domain/contract.ts), on
 * either SQL dialect through one query path. Plain data in, plain data out: nothing of SQL leaves.
 */
import { sql, type Generated, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import { JsonText, type Pet, type PetStatus } from '../../shared/schemas.js';
import { isDatabaseUnavailable } from '../../shared/unavailable.js';
import { createBatcher } from '../queries/batcher.js';
import { prepare, type Executor } from '../queries/prepared.js';
import type { ResourceContext } from '../resource.js';
import { insideUnit, inUnitOfWork } from '../queries/unitOfWork.js';
import { isForeignKeyViolation } from '../queries/constraints.js';

/** The table of src/store/migrations/0001_pets.ts, as Kysely sees it. */
export type Tables = {
  pets: {
    id: Generated<number>;
    name: string;
    category_id: number;
    status: 'available' | 'pending' | 'sold';
    created_at: string;
  };
};

/** A new animal after validation: the spec's default status has been applied. */
export type NewPetRecord = Omit<Pet, 'id'>;

/** A create as the group commit carries it: the animal, and what must commit with it. */
type Creation = { pet: NewPetRecord; then: ((created: Pet) => Promise<unknown>) | undefined };

export interface ListPetsQuery {
  limit: number;
  status?: PetStatus;
  /** Only animals with a larger id: the position a cursor encodes. */
  afterId?: number;
}

export interface PetPage {
  /** The page as the JSON array the client gets, built by the database. */
  pets: JsonText<Pet[]>;
  /** The id of the page's last pet, where a next page starts. */
  lastId: number | undefined;
  /** True when animals exist past the last one of this page. */
  hasMore: boolean;
}

/** Where animals live. One implementation serves both SQL dialects. */
export interface PetStore {
  /**
   * Adds the animal: in the caller's unit of work if it is in one, else in the next group commit.
   * `then`, given the animal as stored, runs in the same transaction (an event that must commit
   * with it: `deps.webhooks.emit`); when it throws, the animal is not stored either.
   */
  create(pet: NewPetRecord, then?: (created: Pet) => Promise<unknown>): Promise<Pet>;
  get(id: number): Promise<Pet | undefined>;
  list(query: ListPetsQuery): Promise<PetPage>;
  /**
   * Sets the animal's fields to `to`, provided it is still exactly `from` (compare and set, one
   * statement: no lock, no lost update between two writers): the animal as it now is, or
   * undefined when it changed since `from` was read, or is gone.
   */
  update(from: Pet, to: NewPetRecord): Promise<Pet | undefined>;
  /** Removes the animal, provided it is still exactly `from`: false when it changed, gained a photo since its photo was removed (in the caller's unit), or is gone. */
  remove(from: Pet): Promise<boolean>;
}

type PetRow = Pick<Selectable<Tables['pets']>, 'id' | 'name' | 'category_id' | 'status'>;

function toPet(row: PetRow): Pet {
  return { id: row.id, name: row.name, categoryId: row.category_id, status: row.status };
}

const COLUMNS = ['id', 'name', 'category_id', 'status'] as const;

/** The animals' store; `onBatch` hears each group commit's size. */
export function open({ db: core, dialect, onBatch }: ResourceContext): PetStore {
  const db = core.withTables<Tables>();
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
  type Change = { id: number; name: string; categoryId: number; status: PetStatus; toName: string; toCategoryId: number; toStatus: PetStatus };
  const setIfUnchanged = prepare<Change, PetRow>(db, (bind) =>
    db
      .updateTable('pets')
      .set({ name: bind('toName'), category_id: bind('toCategoryId'), status: bind('toStatus') })
      .where('id', '=', bind('id'))
      .where('name', '=', bind('name'))
      .where('category_id', '=', bind('categoryId'))
      .where('status', '=', bind('status'))
      .returning(COLUMNS),
  );
  type Removal = { id: number; name: string; categoryId: number; status: PetStatus };
  const removeIfUnchanged = prepare<Removal, { id: number }>(db, (bind) =>
    db.deleteFrom('pets').where('id', '=', bind('id')).where('name', '=', bind('name')).where('category_id', '=', bind('categoryId')).where('status', '=', bind('status')).returning('id'),
  );

  // The database builds the page's JSON itself (json_group_array / json_agg): materialising each
  // row in JavaScript and serialising it again cost more than the rest of the query. Whether a
  // next page exists is one indexed EXISTS past the page's last id (a row_number() window building
  // the same JSON measured slower still: docs/performance.md). One compiled query per combination
  // of filters, so each has its own plan and prepared statement.
  type Page = { limit: number; status: PetStatus; afterId: number };
  type PageRow = { page: string | null; last_id: number | null; has_more: number | boolean };
  const preparePageQuery = (withStatus: boolean, withAfter: boolean) =>
    prepare<Page, PageRow>(db, (bind) => {
      const conditions: RawBuilder<unknown>[] = [];
      if (withStatus) conditions.push(sql`status = ${bind('status')}`);
      if (withAfter) conditions.push(sql`id > ${bind('afterId')}`);
      const where = conditions.length > 0 ? sql`where ${sql.join(conditions, sql` and `)}` : sql``;
      const sameFilter = withStatus ? sql`p.status = ${bind('status')} and` : sql``;
      // The same JSON keys, in the same order, as the spec's Pet (and toPet).
      const json =
        dialect === 'postgres'
          ? // ::text: node-postgres would parse a json column into objects, the very work this avoids.
            sql`cast(json_agg(json_build_object('id', id, 'name', name, 'categoryId', category_id, 'status', status) order by id) as text)`
          : sql`json_group_array(json_object('id', id, 'name', name, 'categoryId', category_id, 'status', status) order by id)`;
      // `limit cast(? as integer)`, not `limit ?`: SQLite reads a bare bound LIMIT of a subquery
      // while planning, which marks the statement to be prepared again whenever the value is
      // bound, that is on every call. The cast keeps the value out of the plan; PostgreSQL is unaffected.
      const query = sql<PageRow>`select page, last_id, exists(select 1 from pets p where ${sameFilter} p.id > agg.last_id) as has_more
        from (select ${json} as page, max(id) as last_id
              from (select id, name, category_id, status from pets ${where} order by id limit cast(${bind('limit')} as integer)) as rows_of_page) as agg`;
      return { compile: () => query.compile(db) };
    });
  const pages = { all: preparePageQuery(false, false), after: preparePageQuery(false, true), status: preparePageQuery(true, false), statusAfter: preparePageQuery(true, true) };

  /** One create: the animal, then what must commit with it, on whatever transaction the caller is in. */
  const createIn = async ({ pet, then }: Creation, createdAt: string): Promise<Pet> => {
    const created = toPet(await insertOne(db, pet, createdAt));
    if (then) await then(created);
    return created;
  };

  // Group commit: creates that arrive while a commit is under way share the next one, so N
  // concurrent creates cost one transaction and one fsync instead of N. The batch is a unit of
  // work, so what each create's `then` writes joins the same transaction.
  const inserts = createBatcher<Creation, Pet>({
    maxBatch: 256,
    ...(onBatch ? { onBatch } : {}),
    writeBatch: (items) =>
      inUnitOfWork(db, async () => {
        const createdAt = new Date().toISOString();
        const created: Pet[] = [];
        for (const item of items) created.push(await createIn(item, createdAt));
        return created;
      }),
    // A batch that failed for another reason is retried one by one: one bad row fails only its own request.
    writeOne: (item) => {
      const createdAt = new Date().toISOString();
      return item.then ? inUnitOfWork(db, () => createIn(item, createdAt)) : createIn(item, createdAt);
    },
    // When the database is down, retrying each item would only hammer it: all of them fail alike.
    retryOneByOne: (error) => !isDatabaseUnavailable(error),
  });

  return {
    async create(pet, then) {
      // Inside a unit of work (a request with an Idempotency-Key, a pet with its photo) the insert
      // is one statement of that unit's transaction; the group commit is for creates on their own.
      if (insideUnit()) return createIn({ pet, then }, new Date().toISOString());
      return inserts.add({ pet, then });
    },

    async get(id) {
      const [row] = await byId({ id });
      return row && toPet(row);
    },

    async update(from, to) {
      const [row] = await setIfUnchanged({ ...from, toName: to.name, toCategoryId: to.categoryId, toStatus: to.status });
      return row && toPet(row);
    },

    async remove(from) {
      try {
        return (await removeIfUnchanged(from)).length > 0;
      } catch (error) {
        // PostgreSQL: a photo was stored for it since the caller removed its photo (in the same
        // unit of work). The animal changed since it was read: the caller's unit rolls back and reads again.
        if (isForeignKeyViolation(error)) return false;
        throw error;
      }
    },

    async list({ limit, status, afterId }: ListPetsQuery): Promise<PetPage> {
      const pageQuery = status === undefined ? (afterId === undefined ? pages.all : pages.after) : afterId === undefined ? pages.status : pages.statusAfter;
      const [row] = await pageQuery({ limit, status: status ?? 'available', afterId: afterId ?? 0 });
      return { pets: new JsonText<Pet[]>(row?.page ?? '[]'), lastId: row?.last_id ?? undefined, hasMore: Boolean(row?.has_more) };
    },
  };
}
