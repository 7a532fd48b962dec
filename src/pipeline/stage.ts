/**
 * A stage of the request path (./requestPath.ts lists them in order) and the one loop that runs
 * them. A stage does one job on the exchange and then either lets the next stage go on
 * (`undefined`), says it has answered the request (`ANSWERED`: a preflight, a probe, the answer
 * itself), or throws a Refusal (src/errors/) that the one exit answers. A stage that waits (a
 * body, a rate-limit count, the handler) returns a promise of the same; every other stage runs
 * in the same tick, so a request that waits for nothing costs no promise.
 */
import type { Exchange } from '../http/exchange.js';

export const ANSWERED = 'answered';
export type Outcome = undefined | typeof ANSWERED;

export interface Stage {
  /** How docs/architecture.md and test/quick/requestPath.test.ts name it. */
  readonly name: string;
  run(exchange: Exchange): Outcome | Promise<Outcome>;
}

/**
 * The request path as one function: runs `stages` in order on an exchange, until one answers;
 * whatever a stage throws or rejects with goes to `fail`, the one exit.
 */
export function runStages(stages: readonly Stage[], fail: (exchange: Exchange, error: unknown) => void): (exchange: Exchange) => void {
  const count = stages.length;
  const from = (exchange: Exchange, first: number): void => {
    for (let i = first; i < count; i++) {
      let outcome: Outcome | Promise<Outcome>;
      try {
        outcome = (stages[i] as Stage).run(exchange);
      } catch (error) {
        fail(exchange, error);
        return;
      }
      if (outcome === undefined) continue;
      if (outcome === ANSWERED) return;
      const next = i + 1;
      outcome.then(
        (later) => {
          if (later !== ANSWERED) from(exchange, next);
        },
        (error: unknown) => fail(exchange, error),
      );
      return;
    }
  };
  return (exchange) => from(exchange, 0);
}
