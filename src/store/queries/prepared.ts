/**
 * Queries that Kysely builds and compiles once, at start; a call only binds new values. Building
 * and compiling a query costs more than running it on a small indexed table, and the same SQL
 * text lets the driver reuse its prepared statement.
 *
 * Outside a transaction a call runs through the database's direct runner when ../database.ts
 * registered one (`runDirectly`): Kysely's executor wraps every query in its connection
 * provider, driver and result transform, a cost of the order of a SQLite point read itself
 * (docs/performance.md). The runner sends
 * the same compiled SQL and values over the same connections, with the same timeouts, statement
 * names and error handling; inside a transaction (the one given, or the unit of work the caller
 * is in: ./unitOfWork.ts), the query goes through the transaction.
 */
import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
import { insideUnit } from './unitOfWork.js';

/** Where a compiled query runs: the database, or a transaction on it. */
export interface Executor {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
}

/**
 * Runs compiled SQL outside any transaction; `undefined` when it cannot run now (SQLite's one
 * connection is inside a transaction), and the query then goes through Kysely, which waits its turn.
 */
export type DirectRunner = (sql: string, parameters: readonly unknown[]) => Promise<unknown[]> | undefined;

/** By query executor: the instances a store module derives with `db.withTables<…>()` share their database's executor, and must share its runner. */
const directRunners = new WeakMap<object, DirectRunner>();

interface HasExecutor {
  getExecutor(): object;
}

const executorOf = (db: object): object | undefined => ('getExecutor' in db && typeof db.getExecutor === 'function' ? (db as HasExecutor).getExecutor() : undefined);

/** Registers the direct runner of a Kysely instance (../database.ts, for the connections it made). */
export function runDirectly(db: HasExecutor, runner: DirectRunner): void {
  directRunners.set(db.getExecutor(), runner);
}

/** The direct runner `prepare` will use for `db`, if any (tests ask: a miss silently costs a Kysely round per query). */
export function directRunnerOf(db: object): DirectRunner | undefined {
  const executor = executorOf(db);
  return executor === undefined ? undefined : directRunners.get(executor);
}

/**
 * Wraps every run of one compiled query (tracing: a span per run, src/features/tracing/tracing.ts), or
 * leaves it bare (undefined). Asked once per query, when it is compiled, with its SQL text: the
 * placeholders are in it, never a bound value. A database without one compiles bare queries, so
 * tracing off costs nothing per query.
 */
export type QueryTracer = (sql: string) => (<R>(run: () => Promise<R>) => Promise<R>) | undefined;

/** By query executor, as directRunners. */
const queryTracers = new WeakMap<object, QueryTracer>();

/** Wraps the queries compiled for `db` from now on (src/server.ts, before the stores open). */
export function traceQueries(db: HasExecutor, tracer: QueryTracer): void {
  queryTracers.set(db.getExecutor(), tracer);
}

/** Stands in for a value at compile time; replaced by the caller's value at each call. */
class Slot {
  constructor(readonly name: string) {}
}

export type Binder<Args> = <K extends keyof Args & string>(name: K) => Args[K];

/**
 * `build` receives `bind(name)`, which returns a placeholder to use wherever a per-call value
 * goes; every other value in the query is fixed at compile time. The result runs on `db`, or on
 * the transaction given as its second argument.
 */
export function prepare<Args extends Record<string, unknown>, Row>(db: Executor, build: (bind: Binder<Args>) => Compilable<Row>): (args: Args, on?: Executor) => Promise<Row[]> {
  const compiled = build(((name: string) => new Slot(name)) as Binder<Args>).compile();
  const slots = compiled.parameters.map((value) => (value instanceof Slot ? value.name : undefined));
  const direct = directRunnerOf(db);
  const run = async (args: Args, on: Executor = db): Promise<Row[]> => {
    const parameters = compiled.parameters.map((value, i) => {
      const name = slots[i];
      return name === undefined ? value : args[name];
    });
    // Inside a unit of work the query must go through Kysely, whose driver gives it the unit's connection.
    if (on === db && direct !== undefined && !insideUnit()) {
      const rows = direct(compiled.sql, parameters);
      if (rows !== undefined) return (await rows) as Row[];
    }
    const query: CompiledQuery<Row> = { ...compiled, parameters };
    return (await on.executeQuery(query)).rows;
  };
  const executor = executorOf(db);
  const traced = executor === undefined ? undefined : queryTracers.get(executor)?.(compiled.sql);
  return traced === undefined ? run : (args, on) => traced(() => run(args, on));
}
