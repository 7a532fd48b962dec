/**
 * The HTTP side of the service, composed into one request listener: everything under the base
 * path goes to the API lane (./api.ts); the probes (/healthz, /readyz) are answered here; the
 * rest (contract, docs, unknown paths) goes to Express (./web.ts). Express is imported a moment
 * after start, so neither it nor its dependencies are on the start-up path; a request that needs
 * it sooner waits for that import. With CORS_ORIGINS set, ./cors.ts sees a request with an
 * Origin first: it adds the CORS headers for an allowed origin, on every lane, and answers a
 * preflight under the base path before routing and the key check.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { KeyVerdict } from '../auth/keyCache.js';
import type { Brownout, CorsOrigins } from '../config.js';
import type { HandlerDeps, Handlers } from '../contract.js';
import type { Logger } from '../logger.js';
import { basePathOf, operationsOf, type OpenApiDocument } from '../spec.js';
import { createApi } from './api.js';
import { createCors } from './cors.js';
import { Deprecations } from './deprecation.js';
import type { Readiness } from './drain.js';
import { beginExchange, type Exchange } from './exchange.js';
import type { Metrics } from './metrics.js';
import type { RateLimiter } from './rateLimit.js';
import { refuse } from '../errors/refusal.js';
import { answerJson, createResponder } from './respond.js';
import { ResponseChecker, type ContractViolation } from './responseChecker.js';
import { createOpenApiBackend } from './validation.js';
import type { WebLane } from './web.js';

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
  /** CORS_ORIGINS; undefined: no CORS (./cors.ts). */
  corsOrigins?: CorsOrigins | undefined;
  /** METRICS_PORT set: counts and times every request (./metrics.ts); undefined: nothing per request. */
  metrics?: Pick<Metrics, 'track'> | undefined;
  /** RATE_LIMIT set: requests with a valid key are counted per key (./rateLimit.ts); undefined: no limits, nothing per request. */
  rateLimit?: Pick<RateLimiter, 'consume'> | undefined;
  /** DEPRECATION_BROWNOUTS: when every deprecated operation answers 410 (./deprecation.ts). */
  brownouts?: readonly Brownout[] | undefined;
  /** Each call of a deprecated operation: the server counts them per key (../store/deprecatedCalls.ts) and in the metrics. */
  onDeprecatedCall?: ((operationId: string, caller: string | undefined, at: number) => void) | undefined;
  /** Shared with the shutdown (./drain.ts): /readyz notes when it was asked, and answers 503 while draining. */
  readiness?: Readiness | undefined;
  /** OpenTelemetry traces on (OTEL_EXPORTER_OTLP_ENDPOINT…): each request is served inside its span; undefined: nothing per request. */
  tracing?: RequestTracing | undefined;
}

/** What the request path asks of tracing (src/telemetry/tracing.ts implements it). */
export interface RequestTracing {
  /**
   * Starts the request's SERVER span (a child of the caller's `traceparent`, if any), ends it when
   * the response is done, and calls `serve(exchange)` at once inside it, so the queries and log
   * lines of the request belong to it.
   */
  trace(exchange: Exchange, serve: (exchange: Exchange) => void): void;
}

export interface App {
  /** The request listener for node:http. */
  app: RequestListener;
  /** Responses that broke the contract (only recorded when validateResponses is on). */
  violations: ContractViolation[];
  /** CORS_ORIGINS set: the CORS headers of an answer to an origin, for node:http's own refusals (./clientError.ts). */
  corsFor: ((origin: string | undefined) => Record<string, string> | undefined) | undefined;
}

const READY_TIMEOUT_MS = 2000;
const WEB_WARMUP_MS = 1000;

export function createApp(options: AppOptions): App {
  const { document, logger } = options;
  const basePath = basePathOf(document);
  const backend = createOpenApiBackend(document, basePath);
  backend.init();
  // Request validators compile on each operation's first request (openapi-backend's quick mode): start-up
  // stays short. Response validators are only for test and dev.
  if (options.validateResponses) {
    backend.validator.preCompileResponseValidators();
    backend.validator.preCompileResponseHeaderValidators();
  }
  const checker = new ResponseChecker(document, backend, options.validateResponses, logger);
  const deprecations = new Deprecations(operationsOf(document), options.brownouts, options.onDeprecatedCall);
  const responder = createResponder(checker, backend.getOperations(), logger);
  const api = createApi({
    backend,
    basePath,
    document,
    handlers: options.handlers,
    deps: options.deps,
    keys: options.keys,
    responder,
    rateLimit: options.rateLimit,
    deprecations,
  });

  const cors = options.corsOrigins === undefined ? undefined : createCors({ origins: options.corsOrigins, backend, serves: api.serves, allowedMethods: api.allowedMethods });

  let web: Promise<WebLane> | undefined;
  const loadWeb = () => (web ??= import('./web.js').then(({ createWeb }) => createWeb({ responder, specJson: JSON.stringify(document), docsFile: options.docsFile })));
  // Warmed up a moment after start, off the path of the first requests (loading it blocks the
  // event loop for tens of milliseconds); until then the first request that needs it loads it.
  setTimeout(() => void loadWeb().catch((error: unknown) => logger.error({ err: error }, 'could not load the web routes')), WEB_WARMUP_MS).unref();

  const { readiness } = options;
  /**
   * /readyz: 200 when the database answers within READY_TIMEOUT_MS, else a 503 Error; a 503 at
   * once while draining, so a balancer stops routing here before the listener closes.
   */
  async function answerReadiness(exchange: Exchange): Promise<void> {
    if (readiness !== undefined) {
      readiness.lastProbeAt = performance.now();
      if (readiness.draining) {
        responder.sendError(exchange, refuse('service_unavailable', 'shuttingDown'));
        return;
      }
    }
    try {
      await withTimeout(options.ping(), READY_TIMEOUT_MS);
      answerJson(exchange, 200, { status: 'ok' });
    } catch (error) {
      logger.warn({ err: error }, 'readiness check failed');
      responder.sendError(exchange, refuse('service_unavailable', 'databaseUnreachable'));
    }
  }

  const { metrics, tracing } = options;
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const exchange = beginExchange(req, res, logger);
    // Tracing off: this test alone; on: the request is served inside its span.
    if (tracing !== undefined) tracing.trace(exchange, serve);
    else serve(exchange);
  };
  const serve = (exchange: Exchange): void => {
    const { req } = exchange;
    const url = req.url ?? '/';
    const underApi = api.serves(url);
    // Metrics off: nothing; on: a clock read and one 'close' listener (the route, read then, is a bounded name, never the path).
    if (metrics !== undefined) metrics.track(exchange);
    // CORS off: nothing; on: one header lookup for a request without an Origin.
    if (cors !== undefined) {
      const origin = req.headers.origin;
      if (origin !== undefined && cors.handle(exchange, origin)) return;
    }
    if (underApi) {
      api.handle(exchange);
      return;
    }
    const path = url.split('?', 1)[0];
    const read = req.method === 'GET' || req.method === 'HEAD';
    if (read && path === '/healthz') {
      answerJson(exchange, 200, { status: 'ok' });
      return;
    }
    if (read && path === '/readyz') {
      void answerReadiness(exchange);
      return;
    }
    loadWeb().then(
      (serveWeb) => serveWeb(exchange),
      (error: unknown) => responder.sendError(exchange, error),
    );
  };
  return { app: listener, violations: checker.violations, corsFor: cors === undefined ? undefined : (origin) => cors.headersFor(origin) };
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
