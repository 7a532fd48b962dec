/**
 * Content negotiation's refusal (RFC 9110 §12.5.1, §15.5.7): a request whose `Accept` allows none
 * of the media types the operation answers with on success is a 406, before the handler does
 * anything. Which of them an answer is written in is the responder's choice, by the same
 * `Accept` (src/http/shapes/representations.ts). No `Accept`, or an operation that answers no
 * content, goes straight on.
 */
import type { Operation } from 'openapi-backend';
import { refuse } from '../errors/refusal.js';
import type { Stage } from '../http/stage.js';
import { chooseMediaType, successMediaTypes } from '../http/shapes/representations.js';
import type { DeclaredResponses } from '../http/shapes/declared.js';

/** `operations`: the contract's, dereferenced (openapi-backend's getOperations). */
export function negotiateStage(operations: readonly Operation[]): Stage {
  const offered = new Map<string, string[]>();
  for (const operation of operations) {
    const types = successMediaTypes(operation.responses as DeclaredResponses | undefined);
    if (operation.operationId !== undefined && types !== undefined) offered.set(operation.operationId, types);
  }
  return {
    name: 'negotiate',
    run(exchange, next) {
      const { accept } = exchange.req.headers;
      if (accept === undefined) return next(exchange);
      const types = offered.get(exchange.operation?.operationId ?? '');
      if (types !== undefined && chooseMediaType(accept, types) === undefined) throw refuse('not_acceptable', 'noneAcceptable', types);
      return next(exchange);
    },
  };
}
