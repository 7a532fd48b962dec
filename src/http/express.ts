/**
 * Express, for everything outside the API: the bundled contract, the rendered docs, and a 404
 * Error body for any other path. Loaded in the background once the server listens (src/pipeline/web.ts, its loadWeb),
 * so it costs the start-up nothing.
 *
 * Express serves its own routes; every Error it has to answer (a Refusal such as a 404, a thrown
 * error) goes to Express's final callback, which holds the exchange and answers through the
 * responder like the rest of the server. That callback takes the place of the one Express would otherwise make per
 * request (its finalhandler).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { redactApiKeys } from '../domain/apiKey.js';
import { SERVED_ORIGIN_PLACEHOLDER, servedDocsPath } from '../shared/paths.js';
import type { Exchange } from './exchange.js';
import { refuse } from '../errors/refusal.js';
import { setExchangeHeaders, type Responder } from './respond.js';

// Each docs page is self-contained: inline script and styles, nothing fetched from afar;
// 'unsafe-eval' because Redoc's search builds its worker's code at run time. connect-src: the
// "Try it" panel calls this server, or a sandbox on the reader's machine (npm run sandbox).
const DOCS_CSP =
  "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' blob:; worker-src blob:; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; connect-src 'self' http://localhost:* http://127.0.0.1:*; frame-ancestors 'none'";
/** A release's folder under /docs (scripts/docs.ts writes one per spec/released/<x.y.z>.json). */
const RELEASE_VERSION = /^\d{1,9}\.\d{1,9}\.\d{1,9}$/;

/** A Host header that can go into the page as it is: a DNS name or IPv4 or [IPv6] address, and a port. */
const PLAIN_HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]{2,45}\])(?::[0-9]{1,5})?$/;
/** How many pages (about 2.5 MB each) are kept, one per distinct Host: enough for localhost, 127.0.0.1 and a name. */
const SERVED_PAGES_KEPT = 4;

/**
 * The served docs page for each Host. The template is read once (again when the file changes)
 * and split at the placeholder; a page is the parts joined with the origin. A Host that is not a
 * plain host[:port] gets the socket's own local address instead, so nothing a client sends but a
 * well-formed name reaches the page. At most SERVED_PAGES_KEPT pages are kept (least recently
 * used out), so a client sending many Host values costs a join each, never memory.
 */
class ServedDocs {
  private template: { mtimeMs: number; parts: string[] } | undefined;
  private readonly pages = new Map<string, Buffer>();

  constructor(private readonly file: string) {}

  /** The page for this request, or undefined when the served page is not built. */
  pageFor(req: IncomingMessage): Buffer | undefined {
    const mtimeMs = statSync(this.file, { throwIfNoEntry: false })?.mtimeMs;
    if (mtimeMs === undefined) return undefined;
    if (this.template?.mtimeMs !== mtimeMs) {
      this.template = { mtimeMs, parts: readFileSync(this.file, 'utf8').split(SERVED_ORIGIN_PLACEHOLDER) };
      this.pages.clear();
    }
    const origin = `http://${hostOf(req)}`;
    let page = this.pages.get(origin);
    if (page) {
      this.pages.delete(origin);
    } else {
      page = Buffer.from(this.template.parts.join(origin));
      if (this.pages.size >= SERVED_PAGES_KEPT) this.pages.delete(this.pages.keys().next().value as string);
    }
    this.pages.set(origin, page);
    return page;
  }
}

/** The request's Host when it is a plain host[:port], else the address and port the request came in on. */
function hostOf(req: IncomingMessage): string {
  const host = req.headers.host?.toLowerCase();
  if (host && host.length <= 260 && PLAIN_HOST.test(host)) return host;
  const { localAddress = '127.0.0.1', localPort } = req.socket;
  const address = localAddress.startsWith('::ffff:') ? localAddress.slice(7) : localAddress;
  return `${address.includes(':') ? `[${address}]` : address}${localPort ? `:${localPort}` : ''}`;
}

export interface WebOptions {
  responder: Responder;
  /** The bundled contract, serialised once. */
  specJson: string;
  docsFile: string;
}

/** Serves one exchange that is not the API's. */
export type WebLane = (exchange: Exchange) => void;

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
  const servedFile = servedDocsPath(options.docsFile);
  const servedDir = dirname(servedFile);
  const served = new ServedDocs(servedFile);
  const notBuilt = () => refuse('not_found', 'docsNotBuilt');
  // The working contract's page, wherever a reader or a relative link may look for it.
  web.get(['/docs', '/docs/index.html'], (req, res, next: NextFunction) => {
    const page = served.pageFor(req);
    if (page) {
      res.set('Content-Security-Policy', DOCS_CSP).set('Cache-Control', 'no-cache').type('html').send(page);
      return;
    }
    // Docs built before the served page existed: the published page, without this server listed.
    if (!existsSync(options.docsFile)) {
      next(notBuilt());
      return;
    }
    res.set('Content-Security-Policy', DOCS_CSP).set('Cache-Control', 'no-cache').sendFile(options.docsFile);
  });
  /** A page of dist/docs-server/ as it is (its links already point under /docs). */
  const sendServed = (relativePath: string, res: Response, next: NextFunction) => {
    const file = join(servedDir, relativePath);
    if (!existsSync(file)) {
      next(notBuilt());
      return;
    }
    res.set('Content-Security-Policy', DOCS_CSP).set('Cache-Control', 'no-cache').sendFile(file);
  };
  web.get('/docs/changes.html', (_req, res, next: NextFunction) => sendServed('changes.html', res, next));
  // A release's page: /docs/1.0.0/ (what the menu links), /docs/1.0.0 and /docs/1.0.0/index.html.
  web.get(['/docs/:version', '/docs/:version/index.html'], (req: Request<{ version: string }>, res, next: NextFunction) => {
    const { version } = req.params;
    if (!RELEASE_VERSION.test(version)) {
      next();
      return;
    }
    if (!existsSync(join(servedDir, version))) {
      next(existsSync(servedDir) ? refuse('not_found', 'noDocsVersion', version) : notBuilt());
      return;
    }
    sendServed(join(version, 'index.html'), res, next);
  });
  // Any method on any other path (an OPTIONS too: answered here, Express never answers it itself).
  web.use((req: Request, _res: Response, next: NextFunction) => {
    next(refuse('not_found', 'noSuchPath', redactApiKeys(req.path)));
  });
  const listener = web as unknown as ExpressListener;
  return (exchange) => {
    // Express writes its answers itself (setHeader, then its own end): the exchange's headers go first.
    setExchangeHeaders(exchange);
    listener(exchange.req, exchange.res, (error?: unknown) => {
      // A failure once the response has begun (a file stream that broke) cannot become an Error body.
      if (exchange.res.headersSent) return;
      responder.sendError(exchange, error ?? new Error('Express finished without answering'));
    });
  };
}
