/**
 * The one exit (Koa's error-handling middleware, Fastify's setErrorHandler): wraps everything after
 * it, so whatever a stage throws or rejects with is answered here, by the responder's sendError
 * (src/http/respond.ts: a Refusal from the catalog as it says, a database out of reach as a 503,
 * anything else a logged 500). Only tracing comes before it, so the answer of a refusal, and its
 * log line, still belong to the request's span.
 */
import type { Responder } from '../http/respond.js';
import type { Stage } from '../http/stage.js';

export function exitStage(responder: Responder): Stage {
  return {
    name: 'exit',
    run(exchange, next) {
      try {
        const done = next(exchange);
        return done === undefined ? undefined : done.then(undefined, (error: unknown) => responder.sendError(exchange, error));
      } catch (error) {
        responder.sendError(exchange, error);
        return undefined;
      }
    },
  };
}
