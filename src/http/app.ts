/**
 * The Express application: the one place that knows HTTP. Order matters and is the contract:
 * security headers and request log → health and contract endpoints (no auth) → under the base
 * path: API key check (before any body is read) → media type and size checks → JSON parsing →
 * openapi-backend (route by operationId, validate) → handler → typed result sent as JSON.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { ErrorBody, ErrorCode, HandlerDeps, Handlers } from '../contract.js';
import { errorBody } from '../contract.js';
import { bearerToken } from '../auth/apiKey.js';
import type { KeyVerdict } from '../auth/keyCache.js';
import type { Logger } from '../logger.js';
import { isUnavailable } from '../store/database.js';
import { basePathOf, operationsOf, type OpenApiDocument } from '../spec.js';
import { deprecationHeaders } from './deprecation.js';
import { ResponseChecker, type ContractViolation } from './responseChecker.js';
import { createOpenApiBackend, detailsOf, summarise, type Context } from './validation.js';

export const MAX_BODY_BYTES = 64 * 1024;

export interface AppOptions {
  document: OpenApiDocument;
  handlers: Handlers;
  deps: HandlerDeps;
  keys: { check(token: string | undefined): KeyVerdict };
  /** Resolves when the database answers. */
  ping: () => Promise<void>;
  logger: Logger;
  /** Check every response against the spec; a mismatch becomes a 500 and a recorded violation. */
  validateResponses: boolean;
  docsFile: string;
}

export interface App {
  app: express.Express;
  /** Responses that broke the contract (only recorded when validateResponses is on). */
  violations: ContractViolation[];
}

type Result = { status: number; body: unknown; headers?: Record<string, string> | undefined };
type AnyHandler = (request: unknown, deps: HandlerDeps) => Promise<Result>;

const API_HEADERS: Record<string, string> = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
};
// The rendered docs are one self-contained page: inline script and styles, nothing fetched from
// afar; 'unsafe-eval' because Redoc's search builds its worker's code at run time.
const DOCS_CSP = "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' blob:; worker-src blob:; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; connect-src 'self'; frame-ancestors 'none'";

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

export function createApp(options: AppOptions): App {
  const { document, logger } = options;
  const basePath = basePathOf(document);
  const operations = operationsOf(document);
  const deprecations = deprecationHeaders(operations);
  const backend = createOpenApiBackend(document, '/');
  const checker = new ResponseChecker(document, backend, options.validateResponses, logger);
  const specJson = JSON.stringify(document);

  /** Sends a body through the contract check; the one exit of every response but the docs. */
  function send(res: Response, operationId: string | undefined, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (operationId) Object.assign(headers, deprecations.get(operationId));
    const violation = checker.check(operationId, status, body, headers, `${res.req.method} ${res.req.originalUrl}`);
    if (violation) {
      status = 500;
      body = errorBody(500, 'internal_error', 'The server produced a response that breaks its contract.');
      headers = {};
    }
    res.status(status).set(headers).json(body);
  }

  function sendError(res: Response, status: number, code: ErrorCode, message: string, operationId?: string, details?: ErrorBody['details'], headers?: Record<string, string>): void {
    send(res, operationId, status, errorBody(status, code, message, details), headers);
  }

  function failure(res: Response, error: unknown, operationId?: string): void {
    if (isUnavailable(error)) {
      logger.warn({ reqId: res.locals.reqId, err: error }, 'database unavailable');
      sendError(res, 503, 'service_unavailable', 'The service is unavailable; retry later.', operationId, undefined, { 'Retry-After': '1' });
      return;
    }
    logger.error({ reqId: res.locals.reqId, err: error }, 'unexpected failure');
    sendError(res, 500, 'internal_error', `An unexpected error occurred (request ${String(res.locals.reqId)}).`, operationId);
  }

  const handlerMap = options.handlers as unknown as Record<string, AnyHandler>;
  for (const op of operations) {
    const handler = handlerMap[op.operationId];
    if (!handler) throw new Error(`No handler for operation ${op.operationId}`);
    backend.register(op.operationId, async (c: Context, _req: Request, res: Response) => {
      const coerced = c.validation.coerced as { params?: unknown; query?: unknown };
      const request = { path: coerced.params ?? c.request.params, query: coerced.query ?? c.request.query, body: c.request.requestBody };
      try {
        // The request was validated against this operation's schemas; the handler's type says so.
        const result = await handler(request, options.deps);
        send(res, op.operationId, result.status, result.body, { ...result.headers });
      } catch (error) {
        failure(res, error, op.operationId);
      }
    });
  }
  backend.register({
    validationFail: (c: Context, _req: Request, res: Response) => {
      const details = detailsOf(c.validation.errors ?? []);
      sendError(res, 400, 'validation_failed', summarise(details), c.operation.operationId, details);
    },
    notFound: (_c: Context, req: Request, res: Response) => sendError(res, 404, 'not_found', `No such path: ${basePath}${req.path}`),
    methodNotAllowed: (_c: Context, req: Request, res: Response) => {
      const allow = operations
        .filter((op) => backend.router.matchOperation({ method: op.method, path: req.path, headers: {} })?.operationId === op.operationId)
        .map((op) => op.method.toUpperCase());
      sendError(res, 405, 'method_not_allowed', `${req.method} is not allowed on ${basePath}${req.path}; use ${allow.join(', ')}.`, undefined, undefined, { Allow: allow.join(', ') });
    },
    // The key was checked before the body was read (see `authenticate`); this only confirms it.
    unauthorizedHandler: (c: Context, _req: Request, res: Response) => sendError(res, 401, 'unauthorized', 'A valid API key is required.', c.operation.operationId, undefined, { 'WWW-Authenticate': 'Bearer realm="animal-store"' }),
  });
  backend.registerSecurityHandler('bearerApiKey', (_c: Context, _req: Request, res: Response) => res.locals.authenticated === true);
  backend.init();
  backend.validator.preCompileRequestValidators();
  if (options.validateResponses) {
    backend.validator.preCompileResponseValidators();
    backend.validator.preCompileResponseHeaderValidators();
  }

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use((req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const incoming = req.headers['x-request-id'];
    const reqId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.reqId = reqId;
    res.set(API_HEADERS).set('X-Request-Id', reqId);
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info({ reqId, method: req.method, path: req.originalUrl.split('?')[0], status: res.statusCode, durationMs: Math.round(durationMs * 100) / 100 }, 'request');
    });
    next();
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await withTimeout(options.ping(), 2000);
      res.json({ status: 'ok' });
    } catch (error) {
      logger.warn({ err: error }, 'readiness check failed');
      res.status(503).json(errorBody(503, 'service_unavailable', 'The database cannot be reached.'));
    }
  });
  app.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(specJson);
  });
  app.get('/docs', (_req, res) => {
    if (!existsSync(options.docsFile)) {
      sendError(res, 404, 'not_found', 'The docs are not built; run `npm run docs`.');
      return;
    }
    res.set('Content-Security-Policy', DOCS_CSP).set('Cache-Control', 'no-cache').sendFile(options.docsFile);
  });

  const api = express.Router();
  api.use(function authenticate(req: Request, res: Response, next: NextFunction) {
    const token = bearerToken(req.headers.authorization);
    const verdict = options.keys.check(token);
    if (verdict === 'valid') {
      res.locals.authenticated = true;
      next();
      return;
    }
    // Nothing of the request is read past this point, so a bad key costs no body parsing.
    res.set('Connection', 'close');
    if (verdict === 'unavailable') {
      sendError(res, 503, 'service_unavailable', 'API keys cannot be checked right now; retry later.', undefined, undefined, { 'Retry-After': '1' });
      return;
    }
    const challenge = token === undefined ? 'Bearer realm="animal-store"' : 'Bearer realm="animal-store", error="invalid_token"';
    sendError(res, 401, 'unauthorized', 'A valid API key is required.', undefined, undefined, { 'WWW-Authenticate': challenge });
  });
  api.use(function requireJson(req: Request, res: Response, next: NextFunction) {
    const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
    if (hasBody && req.is('application/json') === false) {
      res.set('Connection', 'close');
      sendError(res, 415, 'unsupported_media_type', 'The request body must be application/json.');
      return;
    }
    next();
  });
  api.use(express.json({ limit: MAX_BODY_BYTES, strict: false, type: 'application/json' }));
  api.use((req: Request, res: Response, next: NextFunction) => {
    backend
      .handleRequest({ method: req.method, path: req.path, query: req.query as Record<string, string | string[]>, headers: req.headers as Record<string, string | string[]>, body: req.body as unknown }, req, res)
      .catch(next);
  });
  app.use(basePath, api);

  app.use((req: Request, res: Response) => {
    sendError(res, 404, 'not_found', `No such path: ${req.path}`);
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return;
    const type = (error as { type?: unknown }).type;
    switch (type) {
      case 'entity.parse.failed':
        sendError(res, 400, 'invalid_json', 'The request body is not valid JSON.');
        return;
      case 'entity.too.large':
        res.set('Connection', 'close');
        sendError(res, 413, 'payload_too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
        return;
      case 'encoding.unsupported':
      case 'charset.unsupported':
        sendError(res, 415, 'unsupported_media_type', 'The request body must be UTF-8 application/json.');
        return;
      case 'request.aborted':
        return;
      case 'request.size.invalid':
        sendError(res, 400, 'invalid_json', 'The request body is shorter than its Content-Length.');
        return;
    }
    failure(res, error);
  });

  return { app, violations: checker.violations };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
