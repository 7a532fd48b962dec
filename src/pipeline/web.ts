/**
 * The lane outside the API: anything outside the base path (the contract, the docs, unknown paths)
 * goes to Express (src/http/express.ts), imported a moment after start so neither it nor its
 * dependencies are on the start-up path; a request that needs it sooner waits for that import.
 */
import type { Exchange } from '../http/exchange.js';
import type { WebLane } from '../http/express.js';
import type { Responder } from '../http/respond.js';
import type { Logger } from '../shared/logger.js';
import type { Stage } from '../http/stage.js';

const WEB_WARMUP_MS = 1000;

export interface LaneOptions {
  /** Whether a URL is under the API's base path. */
  serves(url: string): boolean;
  logger: Logger;
}

/** The path of a GET or HEAD outside the API, or undefined. */
export function outsideApi(exchange: Exchange, serves: (url: string) => boolean): string | undefined {
  const { method, url = '/' } = exchange.req;
  if ((method !== 'GET' && method !== 'HEAD') || serves(url)) return undefined;
  return url.split('?', 1)[0];
}

export function webStage(options: LaneOptions & { responder: Responder; specJson: string; docsFile: string }): Stage {
  const { responder, logger } = options;
  let web: Promise<WebLane> | undefined;
  const loadWeb = () => (web ??= import('../http/express.js').then(({ createWeb }) => createWeb({ responder, specJson: options.specJson, docsFile: options.docsFile })));
  // Warmed up a moment after start, off the path of the first requests (loading it blocks the
  // event loop for tens of milliseconds); until then the first request that needs it loads it.
  setTimeout(() => void loadWeb().catch((error: unknown) => logger.error({ err: error }, 'could not load the web routes')), WEB_WARMUP_MS).unref();
  return {
    name: 'web',
    run(exchange, next) {
      if (options.serves(exchange.req.url ?? '/')) return next(exchange);
      return loadWeb().then((serveWeb) => {
        serveWeb(exchange);
      });
    },
  };
}
