/**
 * A unit of work: statements of several stores, made while one request is served, that commit
 * together or not at all (an animal and its photo; a request and the answer its Idempotency-Key
 * replays). Stores take no transaction argument: the driver (wrapped by `withUnitsOfWork` in
 * ../database.ts) hands every query made inside a unit the unit's connection, so a handler and the
 * stores it calls join it by being called, whatever way they query (compiled, built, raw SQL).
 * SQLite has one connection: a query inside the unit that waited for it would wait forever.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DatabaseConnection, Dialect, Driver, Kysely, TransactionSettings } from 'kysely';

interface Unit {
  /** The connection the unit's transaction holds, once it has one. */
  connection: DatabaseConnection | undefined;
  /** Who holds it: the transaction, and each query running on it now; the last to let go gives it back. */
  leases: number;
  /** Transactions begun on it: the unit's own, and any a store begins inside it (which joins it). */
  depth: number;
  /** Committed or rolled back: work that outlives its unit (a timer it started) is outside any. */
  done: boolean;
  /** What to do once the unit's transaction has committed (never when it rolled back). */
  committed: Array<() => void>;
}

const ambient = new AsyncLocalStorage<Unit>();

const openUnit = (): Unit | undefined => {
  const unit = ambient.getStore();
  return unit === undefined || unit.done ? undefined : unit;
};

/** Whether the caller is inside a unit of work (./prepared.ts then skips its direct runner, which would run outside it). */
export function insideUnit(): boolean {
  return openUnit() !== undefined;
}

/** Runs `fn` outside any unit: work that serves many requests (a group commit) never joins the unit of the request that started it. */
export function outsideUnits<T>(fn: () => T): T {
  return ambient.exit(fn);
}

/**
 * Runs `work` in a unit of work on `db`: one transaction, committed when `work` resolves and
 * rolled back when it throws. Inside a unit already, `work` joins it.
 */
export function inUnitOfWork<DB, T>(db: Kysely<DB>, work: () => Promise<T>): Promise<T> {
  if (insideUnit()) return work();
  const unit: Unit = { connection: undefined, leases: 0, depth: 0, done: false, committed: [] };
  return ambient
    .run(unit, () => db.transaction().execute(() => work()))
    .finally(() => {
      unit.done = true;
    })
    .then((result) => {
      for (const then of unit.committed) then();
      return result;
    });
}

/**
 * Runs `then` once what the caller wrote is committed: when its unit of work commits (never if it
 * rolls back), or at once outside a unit, where each statement commits on its own. For work that
 * must not see a write before others can (a dispatcher woken to read what was just written).
 */
export function afterCommit(then: () => void): void {
  const unit = openUnit();
  if (unit === undefined) then();
  else unit.committed.push(then);
}

/** The driver, with every connection request inside a unit answered by the unit's connection. */
class UnitDriver implements Driver {
  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const unit = openUnit();
    if (unit?.connection !== undefined) {
      unit.leases += 1;
      return unit.connection;
    }
    const connection = await this.inner.acquireConnection();
    // The first connection a unit asks for is its transaction's (inUnitOfWork asks nothing else first).
    if (unit !== undefined) {
      unit.connection = connection;
      unit.leases = 1;
    }
    return connection;
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const unit = openUnit() ?? ambient.getStore();
    if (unit !== undefined && connection === unit.connection) {
      unit.leases -= 1;
      if (unit.leases > 0) return;
      unit.connection = undefined;
    }
    await this.inner.releaseConnection(connection);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const unit = this.unitOf(connection);
    if (unit !== undefined && unit.depth++ > 0) return;
    await this.inner.beginTransaction(connection, settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const unit = this.unitOf(connection);
    if (unit !== undefined && --unit.depth > 0) return;
    await this.inner.commitTransaction(connection);
  }

  /** A transaction begun inside the unit has no rollback of its own: its error goes on up, and the unit's rollback takes everything. */
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const unit = this.unitOf(connection);
    if (unit !== undefined && --unit.depth > 0) return;
    await this.inner.rollbackTransaction(connection);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }

  private unitOf(connection: DatabaseConnection): Unit | undefined {
    const unit = ambient.getStore();
    return unit !== undefined && connection === unit.connection ? unit : undefined;
  }
}

/** The dialect with units of work (every Kysely instance of ../database.ts is made with one). */
export function withUnitsOfWork(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new UnitDriver(dialect.createDriver()),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}
