/**
 * The lanes outside the API. The probes (`GET /healthz`: alive; `GET /readyz`: the database
 * answers) are answered here, cheaply; anything else outside the base path (the contract, the
 * docs, unknown paths) goes to Express (src/http/web.ts), imported a moment after start so neither
 * it nor its dependencies are on the start-up path; a request that needs it sooner waits for that
 * import.
 */
import { refuse } from '../errors/refusal.js';
import type { Readiness } from '../transport/drain.js';
import type { Exchange } from '../http/exchange.js';
import { answerJson, type Responder } from '../http/respond.js';
import type { WebLane } from '../http/web.js';
import type { Logger } from '../shared/logger.js';
import type { Stage } from '../http/stage.js';

const READY_TIMEOUT_MS = 2000;
const WEB_WARMUP_MS = 1000;

interface LaneOptions {
  /** Whether a URL is under the API's base path. */
  serves(url: string): boolean;
  logger: Logger;
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

/** The path of a GET or HEAD outside the API, or undefined. */
function readPath(exchange: Exchange, serves: (url: string) => boolean): string | undefined {
  const { method, url = '/' } = exchange.req;
  if ((method !== 'GET' && method !== 'HEAD') || serves(url)) return undefined;
  return url.split('?', 1)[0];
}

export function probesStage(options: LaneOptions & { ping: () => Promise<void>; readiness?: Readiness | undefined }): Stage {
  const { readiness, logger } = options;
  /**
   * /readyz: 200 when the database answers within READY_TIMEOUT_MS, else a 503 Error; a 503 at
   * once while draining, so a balancer stops routing here before the listener closes.
   */
  async function answerReadiness(exchange: Exchange): Promise<void> {
    if (readiness !== undefined) {
      readiness.lastProbeAt = performance.now();
      if (readiness.draining) throw refuse('service_unavailable', 'shuttingDown');
    }
    try {
      await withTimeout(options.ping(), READY_TIMEOUT_MS);
    } catch (error) {
      logger.warn({ err: error }, 'readiness check failed');
      throw refuse('service_unavailable', 'databaseUnreachable');
    }
    answerJson(exchange, 200, { status: 'ok' });
  }
  return {
    name: 'probes',
    run(exchange, next) {
      const path = readPath(exchange, options.serves);
      if (path === '/healthz') {
        answerJson(exchange, 200, { status: 'ok' });
        return undefined;
      }
      if (path === '/readyz') return answerReadiness(exchange);
      return next(exchange);
    },
  };
}

export function webStage(options: LaneOptions & { responder: Responder; specJson: string; docsFile: string }): Stage {
  const { responder, logger } = options;
  let web: Promise<WebLane> | undefined;
  const loadWeb = () => (web ??= import('../http/web.js').then(({ createWeb }) => createWeb({ responder, specJson: options.specJson, docsFile: options.docsFile })));
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
