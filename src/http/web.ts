/**
 * Express, for everything outside the API: the bundled contract, the rendered docs, and a 404
 * Error body for any other path. Loaded in the background once the server listens (see app.ts),
 * so it costs the start-up nothing.
 */
import { existsSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { redactApiKeys } from '../auth/apiKey.js';
import type { Responder } from './respond.js';

// The rendered docs are one self-contained page: inline script and styles, nothing fetched from
// afar; 'unsafe-eval' because Redoc's search builds its worker's code at run time.
const DOCS_CSP = "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' blob:; worker-src blob:; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; connect-src 'self'; frame-ancestors 'none'";

export interface WebOptions {
  responder: Responder;
  /** The bundled contract, serialised once. */
  specJson: string;
  docsFile: string;
  /** Request id of a response (set by app.ts before the request gets here). */
  requestId(res: Response): string;
}

export function createWeb(options: WebOptions): RequestListener {
  const { responder } = options;
  const web = express();
  web.disable('x-powered-by');
  web.set('etag', false);
  web.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(options.specJson);
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
    responder.failure(res, options.requestId(res), error);
  });
  return web as unknown as RequestListener;
}
