/**
 * The HTTP side of the service, composed: one request listener that sends everything under the
 * base path to the API lane (src/http/api.ts) and everything else to Express: liveness,
 * readiness, the bundled contract, the rendered docs, and a 404 Error body for the rest.
 */
import { existsSync } from 'node:fs';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { HandlerDeps, Handlers } from '../contract.js';
import { errorBody } from '../contract.js';
import { redactApiKeys } from '../auth/apiKey.js';
import type { KeyVerdict } from '../auth/keyCache.js';
import type { Logger } from '../logger.js';
import { basePathOf, operationsOf, type OpenApiDocument } from '../spec.js';
import { createApi } from './api.js';
import { deprecationHeaders } from './deprecation.js';
import { beginResponse, createResponder, writeJson } from './respond.js';
import { ResponseChecker, type ContractViolation } from './responseChecker.js';
import { createOpenApiBackend } from './validation.js';

export { MAX_BODY_BYTES } from './api.js';

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
  /** The request listener for node:http. */
  app: RequestListener;
  /** Responses that broke the contract (only recorded when validateResponses is on). */
  violations: ContractViolation[];
}

// The rendered docs are one self-contained page: inline script and styles, nothing fetched from
// afar; 'unsafe-eval' because Redoc's search builds its worker's code at run time.
const DOCS_CSP = "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' blob:; worker-src blob:; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; connect-src 'self'; frame-ancestors 'none'";

const READY_TIMEOUT_MS = 2000;

export function createApp(options: AppOptions): App {
  const { document, logger } = options;
  const basePath = basePathOf(document);
  const backend = createOpenApiBackend(document, '/');
  backend.init();
  backend.validator.preCompileRequestValidators();
  if (options.validateResponses) {
    backend.validator.preCompileResponseValidators();
    backend.validator.preCompileResponseHeaderValidators();
  }
  const checker = new ResponseChecker(document, backend, options.validateResponses, logger);
  const responder = createResponder(checker, deprecationHeaders(operationsOf(document)), logger);
  const api = createApi({ backend, handlers: options.handlers, deps: options.deps, keys: options.keys, responder, logger, basePath });
  const specJson = JSON.stringify(document);

  const web = express();
  web.disable('x-powered-by');
  web.set('etag', false);
  web.use((req: Request, res: Response, next: NextFunction) => {
    res.locals.reqId = beginResponse(req, res, logger);
    next();
  });
  web.get('/healthz', (_req, res) => {
    writeJson(res, 200, { status: 'ok' });
  });
  web.get('/readyz', async (_req, res) => {
    try {
      await withTimeout(options.ping(), READY_TIMEOUT_MS);
      writeJson(res, 200, { status: 'ok' });
    } catch (error) {
      logger.warn({ err: error }, 'readiness check failed');
      writeJson(res, 503, errorBody(503, 'service_unavailable', 'The database cannot be reached.'));
    }
  });
  web.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(specJson);
  });
  web.get('/docs', (_req, res) => {
    if (!existsSync(options.docsFile)) {
      responder.sendError(res, 404, 'not_found', 'The docs are not built; run `npm run docs`.');
      return;
    }
    res.set('Content-Security-Policy', DOCS_CSP).set('Cache-Control', 'no-cache').sendFile(options.docsFile);
  });
  web.use((req: Request, res: Response) => {
    responder.sendError(res, 404, 'not_found', `No such path: ${redactApiKeys(req.path)}`);
  });
  web.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return;
    responder.failure(res, String(res.locals.reqId), error);
  });

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    if (api.owns(req.url ?? '/')) api.handle(req, res);
    else web(req, res);
  };
  return { app: listener, violations: checker.violations };
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
