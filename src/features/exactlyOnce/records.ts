/**
 * The `Idempotency-Key` records (table idempotency_records, ./migrations/0006_idempotency_records.ts): what a request with
 * a key finds before its handler runs, and the answer it leaves behind in the same transaction as
 * the handler's writes, so no crash can separate the two.
 */
import { hash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { prepare, type Executor } from '../../store/queries/prepared.js';
import type { Database, Dialect } from '../../store/schema.js';

/** This feature's table, as Kysely sees it (created by ./migrations/). */
export type Tables = {
  idempotency_records: {
    /** Whose key: the caller id of the API key that sent it (HandlerRequest.caller). */
    caller: string;
    /** The operation the key was sent to: one key on two operations is two records. */
    operation_id: string;
    /** The `Idempotency-Key` value exactly as sent. */
    idempotency_key: string;
    /** SHA-256 of the request (src/features/exactlyOnce/fingerprint.ts), to tell a retry from a reuse. */
    fingerprint: string;
    /** The first answer, replayed as it was even if what it is about changes later. */
    status: number;
    /** Its headers, as a JSON object. */
    headers: string;
    media_type: string | null;
    body: Uint8Array | null;
    created_at: string;
  };
};

/**
 * An `Idempotency-Key` as sent, whose it is and where: keys belong to the API key that sent them
 * and to one operation, so two callers, or one key on two operations, never meet.
 */
export interface Claim {
  /** The opaque id of the API key (src/domain/contract.ts, HandlerRequest.caller). */
  caller: string;
  operationId: string;
  key: string;
  /** The request's fingerprint (./fingerprint.ts), to tell a retry from a reuse. */
  fingerprint: string;
}

/** A first answer, as it is replayed: the handler's status and headers, and the body's bytes as sent. */
export interface RecordedAnswer {
  status: number;
  headers: Record<string, string>;
  /** `application/json` for a JSON body; undefined for an answer without one. */
  mediaType: string | undefined;
  body: Buffer | undefined;
}

/** What an earlier request with the same key left. */
export interface KeyRecord {
  fingerprint: string;
  answer: RecordedAnswer;
}

/** What a key's lookup found: nothing yet, an earlier record, or another instance holding the key right now. */
export type Lookup = KeyRecord | 'none' | 'held';

/**
 * Thrown inside a transaction when the key was recorded by someone else after this transaction
 * looked (the primary key refused the second record): the transaction must roll back, handler's
 * writes and all. Cannot happen while the lock and the in-process set work; the primary key is the backstop.
 */
export class KeyRecordedMeanwhile extends Error {
  constructor() {
    super('the Idempotency-Key was recorded by another request after this one looked it up');
  }
}

/** One string per caller, operation and key: none of them can hold a newline (a caller id is hex or 'sandbox'; a key is visible ASCII). */
export const slotOf = (claim: Pick<Claim, 'caller' | 'operationId' | 'key'>): string => `${claim.caller}\n${claim.operationId}\n${claim.key}`;

/**
 * PostgreSQL's advisory locks take one 64-bit number: the first 8 bytes of SHA-256 of the slot.
 * Two keys sharing a number only make one of them wait for a 409's retry.
 */
function lockNumberOf(claim: Claim): string {
  return hash('sha256', slotOf(claim), 'buffer').readBigInt64BE(0).toString();
}

/**
 * Both methods take a whole group commit's claims at once, so that on PostgreSQL a batch pays a
 * fixed number of round trips for its keys (two to look up, one to record) instead of three per
 * request; on SQLite, in process, a statement per claim costs microseconds.
 */
export interface KeyRecords {
  /**
   * What each claim found. On PostgreSQL each key's transaction-scoped advisory lock is taken
   * first, without waiting ('held' when another transaction, on any instance, has it); the records
   * are read by a later statement, which under READ COMMITTED sees whatever each lock's last holder
   * committed. SQLite has one writer, this process, whose in-process set (./stage.ts) keeps two
   * requests with one key apart.
   */
  lookUp(on: Executor, claims: readonly Claim[]): Promise<Lookup[]>;
  /** Records the answers; throws KeyRecordedMeanwhile if any key is taken. */
  record(on: Executor, records: readonly { claim: Claim; answer: RecordedAnswer }[], createdAt: string): Promise<void>;
}

type RecordRow = { caller: string; operation_id: string; idempotency_key: string; fingerprint: string; status: number; headers: string; media_type: string | null; body: Uint8Array | null };

function toLookups(claims: readonly Claim[], rows: readonly RecordRow[], held: ReadonlySet<number> = new Set()): Lookup[] {
  const bySlot = new Map(rows.map((row) => [slotOf({ caller: row.caller, operationId: row.operation_id, key: row.idempotency_key }), row]));
  return claims.map((claim, i) => {
    if (held.has(i)) return 'held';
    const row = bySlot.get(slotOf(claim));
    if (row === undefined) return 'none';
    const body = row.body === null ? undefined : Buffer.from(row.body.buffer, row.body.byteOffset, row.body.byteLength);
    return { fingerprint: row.fingerprint, answer: { status: row.status, headers: JSON.parse(row.headers) as Record<string, string>, mediaType: row.media_type ?? undefined, body } };
  });
}

const COLUMNS = sql`caller, operation_id, idempotency_key, fingerprint, status, headers, media_type, body`;

function postgresKeyRecords(db: Kysely<Database>): KeyRecords {
  // Arrays bound as one parameter each (unnest): one SQL text, so one prepared statement, whatever the batch size.
  const tryLocks = prepare<{ locks: string[] }, { locked: boolean }>(db, (bind) => {
    const query = sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(l.lock) as locked
      from unnest(cast(${bind('locks')} as bigint[])) with ordinality as l(lock, ord) order by l.ord`;
    return { compile: () => query.compile(db) };
  });
  const find = prepare<{ callers: string[]; operations: string[]; keys: string[] }, RecordRow>(db, (bind) => {
    const query = sql<RecordRow>`select ${COLUMNS} from idempotency_records
      where (caller, operation_id, idempotency_key) in (select * from unnest(cast(${bind('callers')} as text[]), cast(${bind('operations')} as text[]), cast(${bind('keys')} as text[])))`;
    return { compile: () => query.compile(db) };
  });
  type Insert = { callers: string[]; operations: string[]; keys: string[]; fingerprints: string[]; statuses: number[]; headers: string[]; mediaTypes: (string | null)[]; bodies: (Buffer | null)[]; createdAt: string };
  const insert = prepare<Insert, { caller: string }>(db, (bind) => {
    const query = sql<{ caller: string }>`insert into idempotency_records (${COLUMNS}, created_at)
      select r.*, ${bind('createdAt')}
      from unnest(cast(${bind('callers')} as text[]), cast(${bind('operations')} as text[]), cast(${bind('keys')} as text[]), cast(${bind('fingerprints')} as text[]),
                  cast(${bind('statuses')} as integer[]), cast(${bind('headers')} as text[]), cast(${bind('mediaTypes')} as text[]), cast(${bind('bodies')} as bytea[]))
        as r(caller, operation_id, idempotency_key, fingerprint, status, headers, media_type, body)
      on conflict (caller, operation_id, idempotency_key) do nothing
      returning caller`;
    return { compile: () => query.compile(db) };
  });
  return {
    async lookUp(on, claims) {
      if (claims.length === 0) return [];
      const locks = await tryLocks({ locks: claims.map(lockNumberOf) }, on);
      const held = new Set(claims.flatMap((_, i) => (locks[i]?.locked === true ? [] : [i])));
      const mine = claims.filter((_, i) => !held.has(i));
      const rows = mine.length === 0 ? [] : await find({ callers: mine.map((c) => c.caller), operations: mine.map((c) => c.operationId), keys: mine.map((c) => c.key) }, on);
      return toLookups(claims, rows, held);
    },
    async record(on, records, createdAt) {
      if (records.length === 0) return;
      const inserted = await insert(
        {
          callers: records.map((r) => r.claim.caller),
          operations: records.map((r) => r.claim.operationId),
          keys: records.map((r) => r.claim.key),
          fingerprints: records.map((r) => r.claim.fingerprint),
          statuses: records.map((r) => r.answer.status),
          headers: records.map((r) => JSON.stringify(r.answer.headers)),
          mediaTypes: records.map((r) => r.answer.mediaType ?? null),
          bodies: records.map((r) => r.answer.body ?? null),
          createdAt,
        },
        on,
      );
      if (inserted.length !== records.length) throw new KeyRecordedMeanwhile();
    },
  };
}

function sqliteKeyRecords(db: Kysely<Database>): KeyRecords {
  const find = prepare<{ caller: string; operationId: string; key: string }, RecordRow>(db, (bind) => {
    const query = sql<RecordRow>`select ${COLUMNS} from idempotency_records where caller = ${bind('caller')} and operation_id = ${bind('operationId')} and idempotency_key = ${bind('key')}`;
    return { compile: () => query.compile(db) };
  });
  type Insert = { caller: string; operationId: string; key: string; fingerprint: string; status: number; headers: string; mediaType: string | null; body: Buffer | null; createdAt: string };
  const insert = prepare<Insert, { caller: string }>(db, (bind) => {
    const query = sql<{ caller: string }>`insert into idempotency_records (${COLUMNS}, created_at)
      values (${bind('caller')}, ${bind('operationId')}, ${bind('key')}, ${bind('fingerprint')}, ${bind('status')}, ${bind('headers')}, ${bind('mediaType')}, ${bind('body')}, ${bind('createdAt')})
      on conflict (caller, operation_id, idempotency_key) do nothing
      returning caller`;
    return { compile: () => query.compile(db) };
  });
  return {
    async lookUp(on, claims) {
      const rows: RecordRow[] = [];
      for (const claim of claims) rows.push(...(await find(claim, on)));
      return toLookups(claims, rows);
    },
    async record(on, records, createdAt) {
      for (const { claim, answer } of records) {
        const row = { ...claim, status: answer.status, headers: JSON.stringify(answer.headers), mediaType: answer.mediaType ?? null, body: answer.body ?? null, createdAt };
        const inserted = await insert(row, on);
        if (inserted.length === 0) throw new KeyRecordedMeanwhile();
      }
    },
  };
}

export function createKeyRecords(db: Kysely<Database>, dialect: Dialect): KeyRecords {
  return dialect === 'postgres' ? postgresKeyRecords(db) : sqliteKeyRecords(db);
}
