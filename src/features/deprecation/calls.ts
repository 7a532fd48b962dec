/**
 * Who still calls the deprecated operations: calls per API key and operation, with the first and
 * the last, kept in the store so an operator can warn each caller before a sunset
 * (`npm run keys -- usage`). Counted in memory and written in one upsert every FLUSH_EVERY_MS and
 * at shutdown, never a write per request; a write that fails keeps its counts for the next one.
 * Several instances add up in the same rows.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';

/** This feature's table, as Kysely sees it (created by ./migrations/). */
export type Tables = {
  deprecated_calls: {
    /** The calling API key's hash (api_keys.key_hash); empty for a call without a key (a public operation). */
    caller: string;
    operation_id: string;
    calls: number;
    /** ISO 8601 UTC; of one length, so they order as text. */
    first_call: string;
    last_call: string;
  };
};

/** The table of deprecated calls: the server's own record, which the sandbox's reset keeps. */
export const CALLS_TABLE = 'deprecated_calls' satisfies keyof Tables;

/** How often the counts are written unless the caller says otherwise. */
export const FLUSH_EVERY_MS = 5_000;

interface Tally {
  caller: string;
  operationId: string;
  calls: number;
  first: number;
  last: number;
}

export interface DeprecatedCallLog {
  /** Counts one call of a deprecated operation by `caller` (the key's hash; undefined without a key) at `at` (ms). */
  record(operationId: string, caller: string | undefined, at: number): void;
  /** Writes what was counted since the last write. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left (at shutdown, before the database closes). */
  close(): Promise<void>;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function createDeprecatedCallLog(store: Kysely<Database>, onError: (error: unknown) => void, flushEveryMs = FLUSH_EVERY_MS): DeprecatedCallLog {
  const db = store.withTables<Tables>();
  let pending = new Map<string, Tally>();
  let writing: Promise<void> = Promise.resolve();

  const write = async (batch: Map<string, Tally>): Promise<void> => {
    if (batch.size === 0) return;
    const rows = [...batch.values()].map((t) => ({ caller: t.caller, operation_id: t.operationId, calls: t.calls, first_call: iso(t.first), last_call: iso(t.last) }));
    try {
      await db
        .insertInto('deprecated_calls')
        .values(rows)
        .onConflict((conflict) =>
          conflict.columns(['caller', 'operation_id']).doUpdateSet({
            calls: sql`deprecated_calls.calls + excluded.calls`,
            // Portable min and max (SQLite's min(a, b) is PostgreSQL's least): the texts order as times.
            first_call: sql`case when excluded.first_call < deprecated_calls.first_call then excluded.first_call else deprecated_calls.first_call end`,
            last_call: sql`case when excluded.last_call > deprecated_calls.last_call then excluded.last_call else deprecated_calls.last_call end`,
          }),
        )
        .execute();
    } catch (error) {
      // Kept for the next write: counts are never dropped while the process lives.
      for (const [key, tally] of batch) merge(key, tally);
      onError(error);
    }
  };

  const merge = (key: string, tally: Tally): void => {
    const seen = pending.get(key);
    if (!seen) {
      pending.set(key, tally);
      return;
    }
    seen.calls += tally.calls;
    seen.first = Math.min(seen.first, tally.first);
    seen.last = Math.max(seen.last, tally.last);
  };

  const flush = (): Promise<void> => {
    const batch = pending;
    pending = new Map();
    // One write at a time, in order.
    writing = writing.then(() => write(batch));
    return writing;
  };

  const timer = setInterval(() => void flush(), flushEveryMs);
  timer.unref();

  return {
    record(operationId, caller = '', at) {
      const key = `${caller}\u0000${operationId}`;
      const seen = pending.get(key);
      if (seen) {
        seen.calls++;
        seen.last = at;
      } else {
        pending.set(key, { caller, operationId, calls: 1, first: at, last: at });
      }
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}

export interface DeprecatedUsage {
  /** The key's id and name; undefined for calls without a key, or a key deleted since. */
  keyId: number | undefined;
  keyName: string | undefined;
  operationId: string;
  calls: number;
  firstCall: string;
  lastCall: string;
}

/** Every row, with its key's id and name, most recent call first. */
export async function deprecatedUsage(db: Kysely<Database>): Promise<DeprecatedUsage[]> {
  const rows = await db
    .withTables<Tables>()
    .selectFrom('deprecated_calls as d')
    .leftJoin('api_keys as k', 'k.key_hash', 'd.caller')
    .select(['k.id', 'k.name', 'd.operation_id', 'd.calls', 'd.first_call', 'd.last_call'])
    .orderBy('d.last_call', 'desc')
    .orderBy('k.id')
    .execute();
  return rows.map((row) => ({
    keyId: row.id ?? undefined,
    keyName: row.name ?? undefined,
    operationId: row.operation_id,
    calls: Number(row.calls),
    firstCall: row.first_call,
    lastCall: row.last_call,
  }));
}
