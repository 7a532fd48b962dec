/**
 * Express, for everything outside the API: the bundled contract, the rendered docs, and a 404
 * Error body for any other path. Loaded in the background once the server listens (see app.ts),
 * so it costs the start-up nothing.
 *
 * Express serves its own routes; every Error it has to answer (a 404, a thrown error) goes to
 * Express's final callback, which holds the exchange and answers through the responder like the
 * rest of the server. That callback takes the place of the one Express would otherwise make per
 * request (its finalhandler).
 */
import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { redactApiKeys } from '../auth/apiKey.js';
import type { Exchange } from './exchange.js';
import type { Responder } from './respond.js';

// The rendered docs are one self-contained page: inline script and styles, nothing fetched from
// afar; 'unsafe-eval' because Redoc's search builds its worker's code at run time.
const DOCS_CSP = "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' blob:; worker-src blob:; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; connect-src 'self'; frame-ancestors 'none'";

export interface WebOptions {
  responder: Responder;
  /** The bundled contract, serialised once. */
  specJson: string;
  docsFile: string;
}

/** Serves one exchange that is not the API's. */
export type WebLane = (exchange: Exchange) => void;

/** A 404 an Express route hands to the final callback, which sends it as an Error body. */
class NotFound {
  constructor(readonly message: string) {}
}

/** An Express app called as node:http's listener, with its final callback (express.js: `app(req, res, next)`); its types omit the callback. */
type ExpressListener = (req: IncomingMessage, res: ServerResponse, done: (error?: unknown) => void) => void;

export function createWeb(options: WebOptions): WebLane {
  const { responder } = options;
  const web = express();
  web.disable('x-powered-by');
  web.set('etag', false);
  web.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(options.specJson);
  });
  web.get('/docs', (_req, res, next: NextFunction) => {
    if (!existsSync(options.docsFile)) {
      next(new NotFound('The docs are not built; run `npm run docs`.'));
      return;
    }
    res.set('Content-Security-Policy', DOCS_CSP).set('Cache-Control', 'no-cache').sendFile(options.docsFile);
  });
  // Any method on any other path (an OPTIONS too: answered here, Express never answers it itself).
  web.use((req: Request, _res: Response, next: NextFunction) => {
    next(new NotFound(`No such path: ${redactApiKeys(req.path)}`));
  });
  const listener = web as unknown as ExpressListener;
  return (exchange) => {
    listener(exchange.req, exchange.res, (error?: unknown) => {
      if (error instanceof NotFound) {
        responder.sendError(exchange, 404, 'not_found', error.message);
        return;
      }
      // A failure once the response has begun (a file stream that broke) cannot become an Error body.
      if (exchange.res.headersSent) return;
      responder.sendFailure(exchange, error ?? new Error('Express finished without answering'));
    });
  };
}
