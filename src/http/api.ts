/**
 * The API under the base path, on node:http: one pass through the request, each concern visited
 * once, in this order (docs/architecture.md draws it):
 *
 *   1. what is refused before routing (a doubled Authorization, a trailing slash);
 *   2. openapi-backend's handleRequest: the operation match (404, 405), the parameters parsed as the
 *      spec declares them, the security handler of each scheme the operation requires (./security.ts);
 *   3. then ours, in serveOperation: a failed key check (401, 503), the deprecation (./deprecation.ts:
 *      its headers, its 410), the rate limit (429), the body (./body.ts), validation with
 *      openapi-backend's compiled validators (400), the handler, and its answer (./respond.ts).
 *
 * openapi-backend stops after the key check (every operation's handler there only hands its context
 * back), so the body is read only once the key is known good, and validated after it is read. Each
 * refusal is thrown as a Refusal (./refusal.ts) and answered in one place, the responder's sendError.
 *
 * Why not Express here: its per-request machinery (prototype swaps, its router, res.json) costs
 * more CPU than a whole listPets, and the performance budget cannot be met through it. Express
 * still serves everything outside the API (contract, docs).
 */
import type { Context, OpenAPIBackend, Operation, Request } from 'openapi-backend';
import { redactApiKeys } from '../auth/apiKey.js';
import type { HandlerDeps, Handlers } from '../contract.js';
import type { OpenApiDocument } from '../spec.js';
import { readJsonBody } from './body.js';
import type { Exchange } from './exchange.js';
import type { Deprecations } from './deprecation.js';
import type { RateLimiter } from './rateLimit.js';
import { setAhead, type AnyHandlerResult, type Responder } from './respond.js';
import { invalidFields, refuse, type Refusal } from '../errors/refusal.js';
import { callerOf, registerSecurityHandlers, unauthorized, type KeyChecker } from './security.js';
import { detailsOf } from './validation.js';

type AnyHandler = (request: HandlerRequestParts, deps: HandlerDeps) => Promise<AnyHandlerResult>;
type Detail = ReturnType<typeof detailsOf>[number];

/** What a handler receives; ../contract.ts types it per operation. */
interface HandlerRequestParts {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  header: Record<string, unknown>;
  cookie: Record<string, unknown>;
  body: unknown;
  caller: string | undefined;
}

export interface ApiOptions {
  backend: OpenAPIBackend;
  document: OpenApiDocument;
  handlers: Handlers;
  deps: HandlerDeps;
  keys: KeyChecker;
  responder: Responder;
  /** The API's base path (`/v1`), openapi-backend's apiRoot. */
  basePath: string;
  /** RATE_LIMIT set: each request with a valid key is counted (./rateLimit.ts); undefined: no limits, no cost. */
  rateLimit?: Pick<RateLimiter, 'consume'> | undefined;
  /** The deprecated operations: their headers, their 410s (brownouts, past the sunset), their calls heard. */
  deprecations: Deprecations;
}

export interface Api {
  /** True when the URL is under the API's base path. */
  serves(url: string): boolean;
  /** Answers the exchange through openapi-backend (the exchange is every handler's second argument). */
  handle(exchange: Exchange): void;
  /** The methods the API has for a request path (`/v1/pets`), as the router says: a 405's Allow, a CORS preflight's answer. */
  allowedMethods(path: string): string[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * What is refused before openapi-backend routes the request:
 * - `Authorization` sent twice: node:http keeps the first and drops the rest, a proxy may read
 *   another one, so a request whose key depends on which is read is refused whatever the order;
 * - a path with a trailing slash (`/v1/pets/`): openapi-backend would route it as `/v1/pets`, a
 *   second address for each resource that the contract, the mock and the docs do not have; it is
 *   a 404 like any unknown path, naming the address without the slash.
 */
function refusalBeforeRouting(rawHeaders: readonly string[], url: string): Refusal | undefined {
  let authorizations = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === 13 && name.toLowerCase() === 'authorization') authorizations++;
  }
  if (authorizations > 1) return invalidFields([{ in: 'header', field: 'Authorization', message: 'must be sent once' }]);
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (path.length > 1 && path.endsWith('/')) {
    const canonical = path.replace(/\/+$/, '');
    return refuse('not_found', 'trailingSlash', redactApiKeys(path), redactApiKeys(canonical));
  }
  return undefined;
}

/**
 * Header details with the names the spec gives them (`Idempotency-Key`): openapi-backend validates
 * the headers under node:http's lower-case names.
 */
function spelledAsDeclared(operation: Operation, details: Detail[]): Detail[] {
  const declared = new Map<string, string>();
  for (const parameter of operation.parameters ?? []) if ('in' in parameter && parameter.in === 'header') declared.set(parameter.name.toLowerCase(), parameter.name);
  return details.map((detail) => (detail.in === 'header' ? { ...detail, field: declared.get(detail.field.toLowerCase()) ?? detail.field } : detail));
}

/** The request's path without its query, as the client sent it (openapi-backend's own copy is normalised). */
function pathOf(exchange: Exchange): string {
  return (exchange.req.url ?? '/').split('?', 1)[0] ?? '';
}

/** The request's method as the client sent it (openapi-backend's own copy is lower-cased). */
function methodOf(exchange: Exchange): string {
  return exchange.req.method ?? 'GET';
}

/** Header and cookie parameters as the spec names them, picked from what openapi-backend parsed. */
function declaredParameters(operation: Operation, where: 'header' | 'cookie', values: Record<string, unknown>): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const parameter of operation.parameters ?? []) {
    if (!('in' in parameter) || parameter.in !== where) continue;
    // openapi-backend lower-cases header names (they are case-insensitive); the spec's spelling is the handler's.
    const value = values[where === 'header' ? parameter.name.toLowerCase() : parameter.name];
    if (value !== undefined) picked[parameter.name] = value;
  }
  return picked;
}

/**
 * Counts the request against its caller's rate limit. The RateLimit headers are set ahead, so
 * every answer from here on carries them (the handler's, a 400, a 413, a 500); over the limit,
 * the request is refused with a 429, its body unread.
 */
async function checkRateLimit(rateLimit: Pick<RateLimiter, 'consume'>, exchange: Exchange, caller: string): Promise<void> {
  const verdict = await rateLimit.consume(caller);
  const { headers } = verdict;
  if (headers !== undefined) for (const name in headers) setAhead(exchange, name, headers[name] as string);
  if (verdict.allowed) return;
  throw refuse('rate_limited', 'overLimit', verdict.message, verdict.retryAfterS);
}

/**
 * Reads the request body of an operation that declares one into openapi-backend's parsed request,
 * which is then validated (and filled with defaults; see patches/). Undefined when there is no body.
 */
function readBody(context: Context, exchange: Exchange): Promise<void> | undefined {
  if (exchange.body === 'none') return undefined;
  const requestBody = context.operation.requestBody as { content?: Record<string, unknown> } | undefined;
  if (!requestBody) throw invalidFields([{ in: 'body', field: '', message: 'is not allowed: this operation takes no request body' }]);
  return readJsonBody(exchange, Object.keys(requestBody.content ?? {})).then((value) => {
    context.request.requestBody = value;
  });
}

/** Whether openapi-backend's security handlers left the operation's requirements unsatisfied. */
function refusedByKeyCheck(context: Context): boolean {
  const security = context.security as { authorized?: boolean } | undefined;
  return security?.authorized === false && (context.operation.security ?? []).length > 0;
}

export function createApi(options: ApiOptions): Api {
  const { backend, responder, rateLimit, deprecations } = options;
  const handlerMap = options.handlers as unknown as Record<string, AnyHandler>;

  /**
   * Step 3, once openapi-backend has routed, parsed and run the security handlers. A promise only
   * while something waits (a rate-limit count, a body); the handler's own promise is never returned:
   * none of this pipeline's promises lives across the handler's database wait (under PostgreSQL
   * load such promises outlived young-generation collections).
   */
  function serveOperation(context: Context, exchange: Exchange): Promise<void> | undefined {
    const { operationId } = context.operation;
    // A failed key check is answered outside any operation (checked as an Error only), though a
    // deprecated operation's 401 carries its headers (the spec declares them).
    if (refusedByKeyCheck(context)) {
      deprecations.admit(exchange, operationId, false);
      throw unauthorized(context);
    }
    exchange.operationId = operationId;
    exchange.caller = callerOf(context);
    const gone = deprecations.admit(exchange, operationId, true);
    if (gone !== undefined) throw gone;
    // Only a caller with a valid key is counted; before the body, so a refused request costs no body parsing.
    const waiting = rateLimit !== undefined && exchange.caller !== undefined ? checkRateLimit(rateLimit, exchange, exchange.caller).then(() => readBody(context, exchange)) : readBody(context, exchange);
    if (waiting !== undefined) return waiting.then(() => validateAndCall(context, exchange));
    validateAndCall(context, exchange);
    return undefined;
  }

  /** Validates the parsed request in place (Ajv coerces parameters and fills defaults), then calls the handler and sends its answer. */
  function validateAndCall(context: Context, exchange: Exchange): void {
    const { operation, request } = context;
    const validation = backend.validator.validateRequest(request, operation, request);
    if (validation.errors) throw invalidFields(spelledAsDeclared(operation, detailsOf(validation.errors)));
    const operationId = operation.operationId ?? '';
    const handler = handlerMap[operationId];
    // An operation in the contract that generated/handlers.ts does not list yet: the compiler says
    // so, but a server started without a type check answers this 501 until `npm run generate`.
    if (handler === undefined) throw refuse('not_implemented', 'noHandler', operationId);
    const parts: HandlerRequestParts = {
      path: request.params,
      query: request.query as Record<string, unknown>,
      header: declaredParameters(operation, 'header', request.headers),
      cookie: declaredParameters(operation, 'cookie', request.cookies),
      body: request.requestBody,
      caller: exchange.caller,
    };
    const fail = (error: unknown): void => responder.sendError(exchange, error);
    handler(parts, options.deps).then((result) => {
      // A result the answer cannot be written from (a body JSON cannot serialise) is a 500, never an unhandled rejection.
      try {
        responder.answer(exchange, result);
      } catch (error) {
        fail(error);
      }
    }, fail);
  }

  /**
   * The methods a path has, for a 405's Allow header: asked of openapi-backend's router. HEAD
   * wherever GET is (RFC 9110 §9.3.2): it is answered as the GET, without the body.
   */
  function allowedMethods(path: string): string[] {
    const methods = METHODS.filter((method) => backend.router.matchOperation({ method, path, headers: {} }) !== undefined);
    if (methods.includes('get') && !methods.includes('head')) methods.splice(methods.indexOf('get') + 1, 0, 'head');
    return methods.map((m) => m.toUpperCase());
  }

  // openapi-backend hands back its context for every routed operation, authorized or not
  // (serveOperation goes on from there), and throws a Refusal for a path or method it has not.
  const routed = (context: Context): Context => context;
  const routedOperations: Record<string, typeof routed> = {};
  for (const operation of backend.getOperations()) if (operation.operationId) routedOperations[operation.operationId] = routed;
  backend.register({
    ...routedOperations,
    unauthorizedHandler: routed,
    notFound: (_context: Context, exchange: Exchange) => {
      throw refuse('not_found', 'noSuchPath', redactApiKeys(pathOf(exchange)));
    },
    methodNotAllowed: (_context: Context, exchange: Exchange) => {
      const path = pathOf(exchange);
      const allow = allowedMethods(path).join(', ');
      throw refuse('method_not_allowed', 'notOnPath', methodOf(exchange), redactApiKeys(path), allow);
    },
  });
  registerSecurityHandlers(backend, options.document, options.keys);

  const fail = (exchange: Exchange, error: unknown): void => {
    // openapi-backend's path parsing decodes each parameter (decodeURIComponent) and throws on a bad escape.
    responder.sendError(exchange, error instanceof URIError ? invalidFields([{ in: 'path', field: '', message: 'is not valid percent-encoding' }]) : error);
  };

  return {
    allowedMethods,
    serves(url) {
      // The lane split of app.ts, on a segment boundary as openapi-backend's apiRoot (whose check is private).
      const end = options.basePath.length;
      return url.startsWith(options.basePath) && (url.length === end || url[end] === '/' || url[end] === '?');
    },
    handle(exchange) {
      const { req } = exchange;
      const url = req.url ?? '/';
      const refusal = refusalBeforeRouting(req.rawHeaders, url);
      if (refusal !== undefined) {
        responder.sendError(exchange, refusal);
        return;
      }
      // HEAD is the GET without its body: node:http sends the GET's status and headers (its
      // Content-Length too) and drops the body of an answer to HEAD.
      const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
      // Node's header values are strings (or string[] for a repeated Set-Cookie-like header), never undefined.
      const request: Request = { method, path: url, headers: req.headers as Request['headers'] };
      (backend.handleRequest(request, exchange) as Promise<Context>).then((context) => serveOperation(context, exchange)).catch((error: unknown) => fail(exchange, error));
    },
  };
}
