/**
 * The API under the base path, straight on node:http. Order matters and is the contract:
 * API key check (before any body is read) → route by operationId (404, 405) → body, only for an
 * operation that takes one (media type, 64 KiB, UTF-8 JSON) → strict path and query conversion →
 * openapi-backend's compiled validators → handler → typed result.
 *
 * Why not Express here: its per-request machinery (prototype swaps, the router, res.json) costs
 * more CPU than a whole listPets on this lane, and the performance budget cannot be met through
 * it. Express still serves everything outside the API (health, readiness, contract, docs).
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import bodyParser from 'body-parser';
import type { Operation, OpenAPIBackend } from 'openapi-backend';
import type { HandlerDeps, Handlers } from '../contract.js';
import { bearerToken, redactApiKeys } from '../auth/apiKey.js';
import type { KeyVerdict } from '../auth/keyCache.js';
import type { Logger } from '../logger.js';
import { beginResponse, type Responder } from './respond.js';
import { compileCoercion, type Location } from './coerce.js';
import { compileRoutes } from './routes.js';
import { detailsOf, summarise } from './validation.js';

export const MAX_BODY_BYTES = 64 * 1024;
/** How much of a body refused unread is drained, and for how long, before the socket is cut. */
const MAX_DRAIN_BYTES = 1024 * 1024;
const DRAIN_MS = 2_000;

type Result = { status: number; body: unknown; headers?: Record<string, string> | undefined };
type AnyHandler = (request: unknown, deps: HandlerDeps) => Promise<Result>;
type Validator = ((data: unknown) => boolean) & { errors?: Parameters<typeof detailsOf>[0] | null };

export interface ApiOptions {
  backend: OpenAPIBackend;
  handlers: Handlers;
  deps: HandlerDeps;
  keys: { check(token: string | undefined): KeyVerdict };
  responder: Responder;
  logger: Logger;
  basePath: string;
}

export interface Api {
  /** True when the URL is under the base path (on a segment boundary). */
  owns(url: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse): void;
}

interface CompiledOperation {
  operationId: string;
  handler: AnyHandler;
  /** openapi-backend's Ajv validators, compiled on the operation's first request (off start-up). */
  validators(): Validator[];
  coerce(where: Location, values: Record<string, unknown>): void;
  /** Whether the operation declares a request body; a body sent to any other is refused unread. */
  takesBody: boolean;
}

/** body-parser's `verify` hook: its UTF-8 decoder would quietly turn bad bytes into U+FFFD. */
function requireUtf8(_req: IncomingMessage, _res: ServerResponse, buffer: Buffer): void {
  // body-parser reports what this throws as type 'entity.verify.failed'.
  if (!isUtf8(buffer)) throw new Error('The request body is not valid UTF-8.');
}

const CHALLENGE = 'Bearer realm="animal-store"';

// body-parser is a plain Node middleware: it needs neither Express's request nor its response.
// Compressed bodies are refused (415): a 64 KiB API has nothing to gain, and inflating invites bombs.
const readJson = bodyParser.json({ limit: MAX_BODY_BYTES, strict: false, type: 'application/json', inflate: false, verify: requireUtf8 }) as unknown as (
  req: IncomingMessage,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void;

/**
 * For an answer given without reading the body. Closing right after it would make the kernel
 * reset the connection over the bytes the client is still sending, and a reset can destroy the
 * answer before the client reads it (nginx calls the cure a lingering close). So the rest of the
 * body is drained, read and dropped, never kept: if it ends within MAX_DRAIN_BYTES and DRAIN_MS
 * the connection serves on; otherwise the socket is destroyed, by when the client has had the
 * answer for a while.
 */
function leaveUnread(req: IncomingMessage): void {
  let drained = 0;
  const cut = (): void => {
    req.socket.destroy();
  };
  const timer = setTimeout(cut, DRAIN_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > MAX_DRAIN_BYTES) cut();
  });
  req.once('end', () => clearTimeout(timer));
  req.socket.once('close', () => clearTimeout(timer));
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The media type without parameters, lower-cased; '' when there is none. */
function mediaType(req: IncomingMessage): string {
  const header = req.headers['content-type'];
  if (!header) return '';
  const semicolon = header.indexOf(';');
  return (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}

export function createApi(options: ApiOptions): Api {
  const { backend, responder, logger, basePath } = options;
  const handlerMap = options.handlers as unknown as Record<string, AnyHandler>;

  const operations = backend.router.getOperations().map((operation: Operation) => {
    const operationId = operation.operationId;
    const handler = operationId ? handlerMap[operationId] : undefined;
    if (!operationId || !handler) throw new Error(`No handler for ${operation.method.toUpperCase()} ${operation.path}`);
    // Every operation is behind the bearer key, which the lane checks first; a public operation
    // would need that check moved, so refuse to start rather than guard it silently.
    const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
    if (schemes.length !== 1 || schemes[0] !== 'bearerApiKey') throw new Error(`${operationId}: only the bearerApiKey security scheme is supported`);
    if (operation.parameters?.some((p) => 'in' in p && p.in === 'cookie')) throw new Error(`${operationId}: cookie parameters are not supported`);
    let validators: Validator[] | undefined;
    const compiled: CompiledOperation & { path: string; method: string } = {
      operationId,
      handler,
      validators: () => (validators ??= (backend.validator.getRequestValidatorsForOperation(operationId) ?? []) as unknown as Validator[]),
      coerce: compileCoercion(operation),
      takesBody: operation.requestBody !== undefined,
      path: operation.path,
      method: operation.method,
    };
    return compiled;
  });
  const routes = compileRoutes(operations);

  function refuse(res: ServerResponse, verdict: KeyVerdict, token: string | undefined): void {
    // Nothing of the request is read past this point, so a bad key costs no body parsing.
    res.setHeader('Connection', 'close');
    if (verdict === 'unavailable') {
      responder.sendError(res, 503, 'service_unavailable', 'API keys cannot be checked right now; retry later.', { headers: { 'Retry-After': '1' } });
      return;
    }
    const challenge = token === undefined ? CHALLENGE : `${CHALLENGE}, error="invalid_token"`;
    responder.sendError(res, 401, 'unauthorized', 'A valid API key is required.', { headers: { 'WWW-Authenticate': challenge } });
  }

  function tooLarge(res: ServerResponse): void {
    leaveUnread(res.req);
    responder.sendError(res, 413, 'payload_too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
  }

  /** body-parser's errors, as the contract's Error bodies. */
  function bodyError(res: ServerResponse, reqId: string, error: unknown): void {
    switch ((error as { type?: unknown }).type) {
      case 'entity.parse.failed':
        responder.sendError(res, 400, 'invalid_json', 'The request body is not valid JSON.');
        return;
      case 'entity.verify.failed':
        responder.sendError(res, 400, 'invalid_json', 'The request body is not valid UTF-8.');
        return;
      case 'entity.too.large':
        tooLarge(res);
        return;
      case 'encoding.unsupported':
      case 'charset.unsupported':
        responder.sendError(res, 415, 'unsupported_media_type', 'The request body must be uncompressed UTF-8 application/json.');
        return;
      case 'request.aborted':
        return;
      case 'request.size.invalid':
        responder.sendError(res, 400, 'invalid_json', 'The request body is shorter than its Content-Length.');
        return;
    }
    responder.failure(res, reqId, error);
  }

  async function run(res: ServerResponse, reqId: string, op: CompiledOperation, request: { path: Record<string, unknown>; query: Record<string, unknown>; body: unknown; headers: IncomingMessage['headers']; json: boolean }): Promise<void> {
    op.coerce('path', request.path);
    op.coerce('query', request.query);
    // The shape openapi-backend's validators were compiled for; Ajv fills defaults in place.
    const parameters: Record<string, unknown> = { path: request.path, query: request.query, header: request.headers, cookie: {} };
    if (request.body !== undefined || request.json) parameters.requestBody = request.body;
    let errors: Parameters<typeof detailsOf>[0] = [];
    for (const validate of op.validators()) {
      if (!validate(parameters)) errors = errors.concat(validate.errors ?? []);
    }
    if (errors.length > 0) {
      const details = detailsOf(errors);
      responder.sendError(res, 400, 'validation_failed', summarise(details), { operationId: op.operationId, details });
      return;
    }
    try {
      // The request was validated against this operation's schemas; the handler's type says so.
      const result = await op.handler({ path: parameters.path, query: parameters.query, body: parameters.requestBody }, options.deps);
      responder.send(res, op.operationId, result.status, result.body, result.headers ? { ...result.headers } : {});
    } catch (error) {
      responder.failure(res, reqId, error, op.operationId);
    }
  }

  /** Reads a JSON body of at most MAX_BODY_BYTES, then runs the operation. */
  function readBody(req: IncomingMessage, res: ServerResponse, reqId: string, op: CompiledOperation, json: boolean, start: (body: unknown) => void): void {
    if (!json) {
      leaveUnread(req);
      responder.sendError(res, 415, 'unsupported_media_type', 'The request body must be application/json.', { operationId: op.operationId });
      return;
    }
    // body-parser reads a refused body to its very end before it reports the refusal, so a
    // 10 MB body would be read (or waited for) whole: answer a declared oversize at once, and
    // an undeclared one (chunked) as soon as it passes the limit.
    const length = req.headers['content-length'];
    if (length !== undefined && Number(length) > MAX_BODY_BYTES) {
      tooLarge(res);
      return;
    }
    let received = 0;
    const guard = (chunk: Buffer): void => {
      received += chunk.length;
      if (received <= MAX_BODY_BYTES) return;
      req.off('data', guard);
      tooLarge(res);
    };
    req.on('data', guard);
    const holder = req as IncomingMessage & { body?: unknown };
    readJson(req, res, (error) => {
      req.off('data', guard);
      if (res.headersSent) return;
      if (error) bodyError(res, reqId, error);
      else start(holder.body);
    });
  }

  return {
    owns(url) {
      return url.startsWith(basePath) && (url.length === basePath.length || url[basePath.length] === '/' || url[basePath.length] === '?');
    },
    handle(req, res) {
      const reqId = beginResponse(req, res, logger);
      const token = bearerToken(req.headers.authorization);
      const verdict = options.keys.check(token);
      if (verdict !== 'valid') {
        refuse(res, verdict, token);
        return;
      }
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const path = (q === -1 ? url : url.slice(0, q)).slice(basePath.length) || '/';
      const found = routes.match(req.method ?? 'GET', path);
      const withBody = hasBody(req);
      if (withBody && (found.kind !== 'operation' || !found.operation.takesBody)) leaveUnread(req);
      if (found.kind === 'none') {
        responder.sendError(res, 404, 'not_found', `No such path: ${redactApiKeys(basePath + path)}`);
        return;
      }
      if (found.kind === 'method') {
        const allow = found.allow.join(', ');
        responder.sendError(res, 405, 'method_not_allowed', `${req.method ?? ''} is not allowed on ${redactApiKeys(basePath + path)}; use ${allow}.`, { headers: { Allow: allow } });
        return;
      }
      const op = found.operation;
      if (withBody && !op.takesBody) {
        const details = [{ in: 'body' as const, field: '', message: 'is not allowed: this operation takes no request body' }];
        responder.sendError(res, 400, 'validation_failed', summarise(details), { operationId: op.operationId, details });
        return;
      }
      // A null-prototype object: `__proto__` in a query string is just an unknown parameter.
      const query = q === -1 ? {} : parseQuery(url.slice(q + 1));
      const json = mediaType(req) === 'application/json';
      const start = (body: unknown): void => {
        run(res, reqId, op, { path: found.params, query, body, headers: req.headers, json }).catch((error: unknown) => responder.failure(res, reqId, error));
      };
      if (withBody) readBody(req, res, reqId, op, json, start);
      else start(undefined);
    },
  };
}
