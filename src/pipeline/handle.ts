/**
 * The operation's handler (handlers/<operationId>.ts, listed in generated/handlers.ts), given
 * the validated request as src/domain/contract.ts types it: header and cookie parameters under the names
 * the spec spells them with, and the caller the key check found. Its result is the answer's.
 */
import type { Operation } from 'openapi-backend';
import type { HandlerDeps, Handlers } from '../domain/contract.js';
import { refuse } from '../errors/refusal.js';
import type { AnyHandlerResult, Exchange } from '../http/exchange.js';
import type { Stage } from '../http/stage.js';
import { answersWriteOnly, answerView } from '../http/shapes/views.js';

/** What a handler receives; src/domain/contract.ts types it per operation. */
interface HandlerRequestParts {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  header: Record<string, unknown>;
  cookie: Record<string, unknown>;
  body: unknown;
  /** The body's own media type (`image/png` where `image/*` is declared); undefined without a body. */
  mediaType: string | undefined;
  caller: string | undefined;
}

type AnyHandler = (request: HandlerRequestParts, deps: HandlerDeps) => Promise<AnyHandlerResult>;

/** Header and cookie parameters as the spec names them, picked from what the router parsed (headers under lower-case names). */
function declaredParameters(operation: Operation, where: 'header' | 'cookie', values: Record<string, unknown>): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const parameter of operation.parameters ?? []) {
    if (!('in' in parameter) || parameter.in !== where) continue;
    const value = values[where === 'header' ? parameter.name.toLowerCase() : parameter.name];
    if (value !== undefined) picked[parameter.name] = value;
  }
  return picked;
}

/** Calls the exchange's handler with the validated request; resolves with its result. */
export type HandlerCall = (exchange: Exchange) => Promise<AnyHandlerResult>;

export function handlerCaller(handlers: Handlers, deps: HandlerDeps): HandlerCall {
  const handlerMap = handlers as unknown as Record<string, AnyHandler>;
  return (exchange) => {
    const { operation, request } = exchange;
    if (operation === undefined || request === undefined) throw new Error('handle: the request was not routed');
    const operationId = operation.operationId ?? '';
    const handler = handlerMap[operationId];
    // An operation in the contract that generated/handlers.ts does not list yet: the compiler says
    // so, but a server started without a type check answers this 501 until `npm run generate`.
    if (handler === undefined) throw refuse('not_implemented', 'noHandler', operationId);
    return handler(
      {
        path: request.params,
        query: request.query as Record<string, unknown>,
        header: declaredParameters(operation, 'header', request.headers),
        cookie: declaredParameters(operation, 'cookie', request.cookies),
        body: request.requestBody,
        mediaType: exchange.mediaType,
        caller: exchange.caller,
      },
      deps,
    );
  };
}

/** Reports an answer from which write-only properties were dropped; a violation (tests and dev) makes it a 500. */
export type WriteOnlyReport = (exchange: Exchange, status: number, removed: readonly string[]) => { problems: string[] } | undefined;

/**
 * Runs the handler: the last stage, inside those that wrap it (the answer, ranges, conditional
 * reads, exactly-once's unit of work, which so stores the answer as it is sent). What the spec
 * marks writeOnly never leaves: dropped from the result here (src/http/shapes/views.ts).
 */
export function handleStage(call: HandlerCall, operations: readonly Operation[], writeOnlyAnswered: WriteOnlyReport): Stage {
  // Found once: an operation that answers nothing write-only goes on with its result as it is.
  const viewed = new Set(operations.filter((operation) => answersWriteOnly(operation.responses as Parameters<typeof answersWriteOnly>[0])).map((operation) => operation.operationId));
  return {
    name: 'handle',
    run(exchange, next) {
      return call(exchange).then((result) => {
        if (!viewed.has(exchange.operation?.operationId)) {
          exchange.result = result;
          return next(exchange);
        }
        const { body, removed } = answerView(exchange.operation?.responses as Parameters<typeof answerView>[0], result.status, result.body);
        if (removed.length > 0) {
          const violation = writeOnlyAnswered(exchange, result.status, removed);
          if (violation) throw refuse('internal_error', 'breaksContract', violation.problems);
          exchange.result = { ...result, body };
        } else exchange.result = result;
        return next(exchange);
      });
    },
  };
}
