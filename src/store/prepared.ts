/**
 * Queries that Kysely builds and compiles once, at start; a call only binds new values. Building
 * and compiling a query costs more than running it on a small indexed table, and the same SQL
 * text lets the driver reuse its prepared statement.
 */
import type { Compilable, CompiledQuery, QueryResult } from 'kysely';

/** Where a compiled query runs: the database, or a transaction on it. */
export interface Executor {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
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
  return async (args, on = db) => {
    const parameters = compiled.parameters.map((value, i) => {
      const name = slots[i];
      return name === undefined ? value : args[name];
    });
    const query: CompiledQuery<Row> = { ...compiled, parameters };
    return (await on.executeQuery(query)).rows;
  };
}
