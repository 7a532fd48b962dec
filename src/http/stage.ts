/**
 * A stage of the request path (src/pipeline/requestPath.ts lists them in order) and the one
 * function that chains them, as Koa's and Connexion's middleware: each stage is given the rest of
 * the path as `next` and calls it to go on, or answers and does not, or throws a Refusal
 * (src/errors/) that the one exit answers. A stage may wrap the rest, doing its work after it too
 * (tracing, the exit, the answer, ranges, conditional reads, exactly-once): `after(next(exchange), …)`.
 *
 * `next` returns `undefined` when the rest completed in the same tick, and a promise only when
 * something in it waited (a body, a count in Redis, a handler): a request that waits for nothing
 * costs no promise, and a wrapper awaits only what waited.
 */
import type { Exchange } from './exchange.js';

/** When the rest of the path is done: now (`undefined`) or when the promise settles; a rejection is a refusal. */
export type Done = undefined | Promise<void>;

/** The rest of the request path after a stage. */
export type Next = (exchange: Exchange) => Done;

export interface Stage {
  /** How docs/architecture.md and test/quick/requestPath.test.ts name it. */
  readonly name: string;
  run(exchange: Exchange, next: Next): Done;
}

/** `then` once `done` is: at once when it already is, so a path that awaited nothing stays free of promises. */
export function after(done: Done, then: () => Done): Done {
  return done === undefined ? then() : done.then(then);
}

/**
 * A stage that reshapes the result of the operations it names once the rest of the path has
 * made it (the conditional read's tag and 304, the byte ranges): any other operation goes straight
 * on, paying one lookup.
 */
export function resultStage(name: string, operationIds: ReadonlySet<string>, reshape: (exchange: Exchange) => Done): Stage {
  return {
    name,
    run(exchange, next) {
      const operationId = exchange.operation?.operationId;
      if (operationId === undefined || !operationIds.has(operationId)) return next(exchange);
      return after(next(exchange), () => reshape(exchange));
    },
  };
}

/** The end of the path: a stage that calls `next` last has nothing after it. */
const END: Next = () => undefined;

/**
 * The request path as one function: runs `stages` in order on an exchange, each handed the rest.
 * Whatever escapes every stage (one outside the exit threw) goes to `fail`.
 */
export function chainStages(stages: readonly Stage[], fail: (exchange: Exchange, error: unknown) => void): (exchange: Exchange) => void {
  let rest = END;
  for (let i = stages.length - 1; i >= 0; i--) {
    const stage = stages[i] as Stage;
    const next = rest;
    rest = (exchange) => stage.run(exchange, next);
  }
  const first = rest;
  return (exchange) => {
    let done: Done;
    try {
      done = first(exchange);
    } catch (error) {
      fail(exchange, error);
      return;
    }
    if (done !== undefined) done.then(undefined, (error: unknown) => fail(exchange, error));
  };
}

/**
 * The server's own stages, in the order src/pipeline/requestPath.ts runs them; a feature's stage
 * goes before the one it names (src/features/feature.ts).
 */
export const CORE_STAGES = ['exit', 'probes', 'web', 'before routing', 'match', 'authenticate', 'body', 'validate', 'negotiate', 'answer', 'ranges', 'conditional', 'handle'] as const;
export type CoreStage = (typeof CORE_STAGES)[number];
