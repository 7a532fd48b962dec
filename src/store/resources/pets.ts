/**
 * The animals: their table, and the store handlers reach as `deps.pets` (src/contract.ts), on
 * either SQL dialect through one query path. Plain data in, plain data out: nothing of SQL leaves.
 */
import { sql, type Generated, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import { JsonText, type Pet, type PetStatus } from '../../schemas.js';
import { isDatabaseUnavailable } from '../../unavailable.js';
import { createBatcher } from '../batcher.js';
import { createKeyRecords, fingerprintOf, KeyRecordedMeanwhile, slotOf, type Claim, type IdempotencyKey, type NewKeyRecord } from '../idempotency/keys.js';
import { prepare, type Executor } from '../prepared.js';
import type { ResourceContext } from '../resource.js';
import { currentUnit } from '../unitOfWork.js';

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

/**
 * What a create came to, named as the spec names the answers. Without an `Idempotency-Key`
 * always `created`. With one: `replayed` when the key was used before with an equal body (`body`
 * is the first 201's, as sent then; Idempotent-Replayed), `idempotency_key_reused` when with
 * another body (422), `idempotency_key_in_use` while the first request with the key is still
 * being served (409).
 */
export type CreateOutcome =
  | { outcome: 'created'; pet: Pet }
  | { outcome: 'replayed'; petId: number; body: JsonText<Pet> }
  | { outcome: 'idempotency_key_reused' }
  | { outcome: 'idempotency_key_in_use' };

/** Where animals live. One implementation serves both SQL dialects. */
export interface PetStore {
  /** Adds the animal; with `once`, at most once per key (see CreateOutcome). */
  create(pet: NewPetRecord, once?: IdempotencyKey): Promise<CreateOutcome>;
  get(id: number): Promise<Pet | undefined>;
  list(query: ListPetsQuery): Promise<PetPage>;
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

  // A create with an Idempotency-Key looks its key up and records it in the transaction that
  // inserts its pet, so the pet and the record commit together or not at all. Creates without a
  // key run their inserts alone, as before keys existed (./idempotencyKeys.ts runs nothing for them).
  const keys = createKeyRecords(core, dialect);
  type Item = { pet: NewPetRecord; claim?: Claim };
  const writeItems = async (on: Executor, items: readonly Item[], createdAt: string): Promise<CreateOutcome[]> => {
    const found = await keys.lookUp(on, items.map((item) => item.claim));
    const outcomes: CreateOutcome[] = [];
    const records: NewKeyRecord[] = [];
    for (const [i, { pet, claim }] of items.entries()) {
      const prior = found[i];
      if (claim === undefined || prior === undefined || prior === 'none') {
        const created = toPet(await insertOne(on, pet, createdAt));
        // The body exactly as the 201 sends it (the responder's JSON.stringify of the same object).
        if (claim) records.push({ claim, petId: created.id, responseBody: JSON.stringify(created) });
        outcomes.push({ outcome: 'created', pet: created });
      } else if (prior === 'held') {
        outcomes.push({ outcome: 'idempotency_key_in_use' });
      } else {
        outcomes.push(prior.fingerprint === claim.fingerprint ? { outcome: 'replayed', petId: prior.petId, body: new JsonText<Pet>(prior.responseBody) } : { outcome: 'idempotency_key_reused' });
      }
    }
    await keys.record(on, records, createdAt);
    return outcomes;
  };
  const writeOne = async (item: Item, createdAt: string): Promise<CreateOutcome> => {
    if (!item.claim) return (await writeItems(db, [item], createdAt))[0] as CreateOutcome;
    try {
      return (await db.transaction().execute((trx) => writeItems(trx, [item], createdAt)))[0] as CreateOutcome;
    } catch (error) {
      // Someone recorded the key after we looked: answer as to a request still in flight; its retry gets the replay.
      if (error instanceof KeyRecordedMeanwhile) return { outcome: 'idempotency_key_in_use' };
      throw error;
    }
  };

  // Group commit: creates that arrive while a commit is under way share the next one, so N
  // concurrent creates cost one transaction and one fsync instead of N.
  const inserts = createBatcher<Item, CreateOutcome>({
    maxBatch: 256,
    ...(onBatch ? { onBatch } : {}),
    writeBatch: (items) => db.transaction().execute((trx) => writeItems(trx, items, new Date().toISOString())),
    // A batch that failed for another reason (KeyRecordedMeanwhile included) is retried one by
    // one: one bad row fails only its own request, and a key's retry sees the record that beat it.
    writeOne: (item) => writeOne(item, new Date().toISOString()),
    // When the database is down, retrying each item would only hammer it: all of them fail alike.
    retryOneByOne: (error) => !isDatabaseUnavailable(error),
  });

  // Keys whose request is being served by this instance: a second request with one gets a 409
  // at once, without a query. (Other instances: the advisory lock in ./idempotencyKeys.ts.)
  const inFlight = new Set<string>();

  return {
    async create(pet, once) {
      // Inside a unit of work (a request with an Idempotency-Key, a pet with its photo) the insert
      // is one statement of that unit's transaction; the group commit is for creates on their own.
      const unit = currentUnit();
      if (unit !== undefined && once === undefined) return { outcome: 'created', pet: toPet(await insertOne(unit, pet, new Date().toISOString())) };
      if (once === undefined) return inserts.add({ pet });
      const slot = slotOf(once);
      if (inFlight.has(slot)) return { outcome: 'idempotency_key_in_use' };
      inFlight.add(slot);
      try {
        return await inserts.add({ pet, claim: { caller: once.caller, key: once.key, fingerprint: fingerprintOf(pet) } });
      } finally {
        inFlight.delete(slot);
      }
    },

    async get(id) {
      const [row] = await byId({ id });
      return row && toPet(row);
    },

    async list({ limit, status, afterId }: ListPetsQuery): Promise<PetPage> {
      const pageQuery = status === undefined ? (afterId === undefined ? pages.all : pages.after) : afterId === undefined ? pages.status : pages.statusAfter;
      const [row] = await pageQuery({ limit, status: status ?? 'available', afterId: afterId ?? 0 });
      return { pets: new JsonText<Pet[]>(row?.page ?? '[]'), lastId: row?.last_id ?? undefined, hasMore: Boolean(row?.has_more) };
    },
  };
}
