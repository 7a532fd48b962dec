/**
 * Forgets `Idempotency-Key` records once they are older than the retention the spec promises
 * (at least 24 hours): at start and then every 10 minutes, on every instance (a delete that finds
 * nothing costs one indexed lookup, so instances need not take turns).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';

export const KEY_RETENTION_MS = 24 * 60 * 60 * 1000;
const PURGE_EVERY_MS = 10 * 60 * 1000;
/**
 * Rows per delete. SQLite has one connection, shared with the creates, and better-sqlite3 runs a
 * statement on the event loop: small deletes with a turn of the loop between them let creates
 * in between, instead of one long delete holding both the connection and the loop.
 */
const CHUNK = 500;

/**
 * Deletes, in chunks, the records created before `olderThan`; resolves with how many went.
 * `keepGoing` is asked between chunks (false: stop early, the rest waits for the next run).
 */
export async function purgeIdempotencyKeys(db: Kysely<Database>, olderThan: Date, keepGoing: () => boolean = () => true): Promise<number> {
  const cutoff = olderThan.toISOString();
  let purged = 0;
  for (;;) {
    // ISO-8601 UTC timestamps of one length order as text, so the created_at index answers this.
    const result = await sql`delete from idempotency_records where (caller, operation_id, idempotency_key) in
      (select caller, operation_id, idempotency_key from idempotency_records where created_at < ${cutoff} order by created_at limit ${sql.lit(CHUNK)})`.execute(db);
    const deleted = Number(result.numAffectedRows ?? 0n);
    purged += deleted;
    if (deleted < CHUNK || !keepGoing()) return purged;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export interface PurgeOptions {
  onPurged?(count: number): void;
  onError(error: unknown): void;
}

export interface Purge {
  /** Stops the timer and waits for a run under way, so the database can be closed after it. */
  stop(): Promise<void>;
}

/** Runs the purge now and every 10 minutes; the timer never keeps the process alive. */
export function startIdempotencyPurge(db: Kysely<Database>, options: PurgeOptions): Purge {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = running.then(async () => {
      if (stopped) return;
      try {
        const count = await purgeIdempotencyKeys(db, new Date(Date.now() - KEY_RETENTION_MS), () => !stopped);
        if (count > 0) options.onPurged?.(count);
      } catch (error) {
        options.onError(error);
      }
    });
  };
  const timer = setInterval(run, PURGE_EVERY_MS);
  timer.unref();
  run();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
