/**
 * A unit of work: statements of several stores, made while one request is served, that commit
 * together or not at all (an animal and its photo; a create and the answer its Idempotency-Key
 * replays). Stores take no transaction argument: every compiled query (./prepared.ts) runs in the
 * unit the caller is inside, if any, so a handler joins one without passing anything on.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely, Transaction } from 'kysely';

const ambient = new AsyncLocalStorage<Transaction<unknown>>();

/** The transaction of the unit of work the caller is inside, or undefined outside one (an Executor of ./prepared.ts, which imports this module). */
export function currentUnit(): Transaction<unknown> | undefined {
  return ambient.getStore();
}

/**
 * Runs `work` in a unit of work on `db`: one transaction, committed when `work` resolves and
 * rolled back when it throws. Inside a unit already, `work` joins it (SQLite has one connection:
 * a second transaction would wait for the first forever).
 */
export function inUnitOfWork<DB, T>(db: Kysely<DB>, work: () => Promise<T>): Promise<T> {
  if (ambient.getStore() !== undefined) return work();
  return (db as unknown as Kysely<unknown>).transaction().execute((trx) => ambient.run(trx, work));
}
