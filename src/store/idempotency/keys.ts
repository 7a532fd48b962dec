/**
 * The `Idempotency-Key` records (table idempotency_keys): what a create with a key finds before
 * it writes, and what it leaves behind in the same transaction as its pet, so no crash can
 * separate the two. ./resources/pets.ts runs these inside its group-commit transactions.
 */
import { hash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { prepare, type Executor } from '../prepared.js';
import type { Database, Dialect } from '../schema.js';

/**
 * An `Idempotency-Key` as sent (spec: IdempotencyKey) and whose it is: keys belong to the API key
 * that sent them, so two callers with the same key never meet.
 */
export interface IdempotencyKey {
  /** The opaque id of the API key (../contract.ts, HandlerRequest.caller). */
  caller: string;
  key: string;
}

/** A key with the fingerprint of the request that carries it. */
export interface Claim extends IdempotencyKey {
  fingerprint: string;
}

/** What an earlier request with the same key left. */
export interface KeyRecord {
  fingerprint: string;
  petId: number;
  responseBody: string;
}

/** What a key's lookup found: nothing yet, an earlier record, or another instance holding the key right now. */
export type Lookup = KeyRecord | 'none' | 'held';

/**
 * Thrown inside a transaction when the key was recorded by someone else after this transaction
 * looked (the primary key refused the second record): the transaction must roll back, pet and
 * all. Cannot happen while the lock and the in-process set work; the primary key is the backstop.
 */
export class KeyRecordedMeanwhile extends Error {
  constructor() {
    super('the Idempotency-Key was recorded by another request after this one looked it up');
  }
}

/** JSON with every object's keys sorted, at any depth (absent fields left out, as JSON.stringify does). */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const object = value as Record<string, unknown>;
  const fields = Object.keys(object)
    .filter((name) => object[name] !== undefined)
    .sort()
    .map((name) => `${JSON.stringify(name)}:${canonicalJson(object[name])}`);
  return `{${fields.join(',')}}`;
}

/**
 * The request's body compared by value: SHA-256 of its canonical JSON, after the spec's defaults
 * were applied (so `status` omitted equals `status: available`, and key order or whitespace in
 * the request do not matter). Every field of the record counts, fields added to the spec later too.
 */
export function fingerprintOf(record: object): string {
  return hash('sha256', canonicalJson(record), 'hex');
}

/** One string per caller and key: neither part can hold a newline (a caller id is hex or 'sandbox'; a key is visible ASCII). */
export const slotOf = (once: IdempotencyKey): string => `${once.caller}\n${once.key}`;

/**
 * PostgreSQL's advisory locks take one 64-bit number: the first 8 bytes of SHA-256 of the
 * caller and key. Two keys sharing a number only make one of them wait for a 409's retry.
 */
function lockNumberOf(once: IdempotencyKey): string {
  const digest = hash('sha256', slotOf(once), 'buffer');
  return digest.readBigInt64BE(0).toString();
}

/** A key to record with the pet its request created and the 201 body sent for it. */
export interface NewKeyRecord {
  claim: Claim;
  petId: number;
  responseBody: string;
}

/**
 * Both methods take a whole group commit's items at once, so that on PostgreSQL a batch pays a
 * fixed number of round trips for its keys (two to look up, one to record) instead of three per
 * item; on SQLite, in process, a statement per item costs microseconds. Neither runs a statement
 * when no item has a key: creates without one cost what they did before keys existed.
 */
export interface KeyRecords {
  /**
   * What each item's key found (undefined for an item without a key). On PostgreSQL each key's
   * transaction-scoped advisory lock is taken first, without waiting ('held' when another
   * transaction, on any instance, has it); the records are read by a later statement, which under
   * READ COMMITTED sees whatever each lock's last holder committed. SQLite has one writer, this
   * process, whose in-process set (./pets.ts) keeps two requests with one key apart.
   */
  lookUp(on: Executor, claims: readonly (Claim | undefined)[]): Promise<(Lookup | undefined)[]>;
  /** Records the keys with their pets and 201 bodies; throws KeyRecordedMeanwhile if any key is taken. */
  record(on: Executor, records: readonly NewKeyRecord[], createdAt: string): Promise<void>;
}

type RecordRow = { caller: string; idempotency_key: string; fingerprint: string; pet_id: number; response_body: string };

function toLookups(claims: readonly (Claim | undefined)[], rows: readonly RecordRow[], held: ReadonlySet<number> = new Set()): (Lookup | undefined)[] {
  const byKey = new Map(rows.map((row) => [slotOf({ caller: row.caller, key: row.idempotency_key }), row]));
  return claims.map((claim, i) => {
    if (claim === undefined) return undefined;
    if (held.has(i)) return 'held';
    const row = byKey.get(slotOf(claim));
    return row ? { fingerprint: row.fingerprint, petId: row.pet_id, responseBody: row.response_body } : 'none';
  });
}

function postgresKeyRecords(db: Kysely<Database>): KeyRecords {
  // Arrays bound as one parameter each (unnest): one SQL text, so one prepared statement, whatever the batch size.
  const tryLocks = prepare<{ locks: string[] }, { locked: boolean }>(db, (bind) => {
    const query = sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(l.lock) as locked
      from unnest(cast(${bind('locks')} as bigint[])) with ordinality as l(lock, ord) order by l.ord`;
    return { compile: () => query.compile(db) };
  });
  const find = prepare<{ callers: string[]; keys: string[] }, RecordRow>(db, (bind) => {
    const query = sql<RecordRow>`select caller, idempotency_key, fingerprint, pet_id, response_body from idempotency_keys
      where (caller, idempotency_key) in (select * from unnest(cast(${bind('callers')} as text[]), cast(${bind('keys')} as text[])))`;
    return { compile: () => query.compile(db) };
  });
  type Insert = { callers: string[]; keys: string[]; fingerprints: string[]; petIds: number[]; bodies: string[]; createdAt: string };
  const insert = prepare<Insert, { caller: string }>(db, (bind) => {
    const query = sql<{ caller: string }>`insert into idempotency_keys (caller, idempotency_key, fingerprint, pet_id, response_body, created_at)
      select r.caller, r.idempotency_key, r.fingerprint, r.pet_id, r.response_body, ${bind('createdAt')}
      from unnest(cast(${bind('callers')} as text[]), cast(${bind('keys')} as text[]), cast(${bind('fingerprints')} as text[]),
                  cast(${bind('petIds')} as bigint[]), cast(${bind('bodies')} as text[])) as r(caller, idempotency_key, fingerprint, pet_id, response_body)
      on conflict (caller, idempotency_key) do nothing
      returning caller`;
    return { compile: () => query.compile(db) };
  });
  return {
    async lookUp(on, claims) {
      const keyed = claims.flatMap((claim, i) => (claim ? [{ claim, i }] : []));
      if (keyed.length === 0) return claims.map(() => undefined);
      const locks = await tryLocks({ locks: keyed.map(({ claim }) => lockNumberOf(claim)) }, on);
      const held = new Set(keyed.filter((_, j) => locks[j]?.locked !== true).map(({ i }) => i));
      const mine = keyed.filter(({ i }) => !held.has(i)).map(({ claim }) => claim);
      const rows = mine.length === 0 ? [] : await find({ callers: mine.map((c) => c.caller), keys: mine.map((c) => c.key) }, on);
      return toLookups(claims, rows, held);
    },
    async record(on, records, createdAt) {
      if (records.length === 0) return;
      const inserted = await insert(
        {
          callers: records.map((r) => r.claim.caller),
          keys: records.map((r) => r.claim.key),
          fingerprints: records.map((r) => r.claim.fingerprint),
          petIds: records.map((r) => r.petId),
          bodies: records.map((r) => r.responseBody),
          createdAt,
        },
        on,
      );
      if (inserted.length !== records.length) throw new KeyRecordedMeanwhile();
    },
  };
}

function sqliteKeyRecords(db: Kysely<Database>): KeyRecords {
  const find = prepare<{ caller: string; key: string }, RecordRow>(db, (bind) =>
    db
      .selectFrom('idempotency_keys')
      .select(['caller', 'idempotency_key', 'fingerprint', 'pet_id', 'response_body'])
      .where('caller', '=', bind('caller'))
      .where('idempotency_key', '=', bind('key')),
  );
  type Insert = { caller: string; key: string; fingerprint: string; petId: number; body: string; createdAt: string };
  const insert = prepare<Insert, { caller: string }>(db, (bind) =>
    db
      .insertInto('idempotency_keys')
      .values({ caller: bind('caller'), idempotency_key: bind('key'), fingerprint: bind('fingerprint'), pet_id: bind('petId'), response_body: bind('body'), created_at: bind('createdAt') })
      .onConflict((conflict) => conflict.columns(['caller', 'idempotency_key']).doNothing())
      .returning('caller'),
  );
  return {
    async lookUp(on, claims) {
      const rows: RecordRow[] = [];
      for (const claim of claims) if (claim) rows.push(...(await find({ caller: claim.caller, key: claim.key }, on)));
      return toLookups(claims, rows);
    },
    async record(on, records, createdAt) {
      for (const { claim, petId, responseBody } of records) {
        const inserted = await insert({ caller: claim.caller, key: claim.key, fingerprint: claim.fingerprint, petId, body: responseBody, createdAt }, on);
        if (inserted.length === 0) throw new KeyRecordedMeanwhile();
      }
    },
  };
}

export function createKeyRecords(db: Kysely<Database>, dialect: Dialect): KeyRecords {
  return dialect === 'postgres' ? postgresKeyRecords(db) : sqliteKeyRecords(db);
}
