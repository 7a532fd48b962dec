/**
 * The request path, top to bottom, in one list (docs/architecture.md draws it, and
 * test/quick/requestPath.test.ts fails when a request visits a stage twice or out of order):
 *
 *   transport        src/transport/listen.ts: the listener, connections and their bound, node:http's
 *                    own refusals (src/transport/clientError.ts), the drain at shutdown
 *   exchange         src/http/exchange.ts: the request id, the body's framing, the log line
 *   [tracing]        src/features/tracing/: with OTEL_* only, the whole path runs inside the request's span
 *   [metrics]        src/features/metrics/: with METRICS_PORT only
 *   [cors]           src/features/cors/: with CORS_ORIGINS only; answers a preflight
 *   probes           /healthz, /readyz (./lanes.ts)
 *   web              anything outside the base path: Express (./lanes.ts, src/http/web.ts)
 *   before routing   a doubled Authorization, a trailing slash (./beforeRouting.ts)
 *   match            openapi-backend's router: 404, 405, parameters parsed (./match.ts)
 *   authenticate     who is calling, from the operation's security (./authenticate.ts)
 *   deprecation      its headers, the call heard, the 410 (src/features/deprecation/)
 *   authorize        the key check's 401 or 503 (./authorize.ts)
 *   [rate limit]     with RATE_LIMIT only: 429 (src/features/rateLimit/)
 *   body             by media type (./body.ts)
 *   validate         openapi-backend's compiled validators: 400 (./validate.ts)
 *   [exactly once]   where an operation declares Idempotency-Key: the replay, 409, 422, and the
 *                    handler inside the unit of work that records its answer (src/features/exactlyOnce/)
 *   handle           handlers/<operationId>.ts (./handle.ts)
 *   answer           headers, ETag and 304, the contract check, the JSON (./answer.ts)
 *
 * A [feature] is a stage put in the list when it is configured, and nothing otherwise: a request
 * pays for none that is off. Whatever a stage throws leaves through one exit, the responder's
 * sendError (src/http/respond.ts), which writes every refusal from the error catalog
 * (src/errors/). `arrangeStages` lets a caller insert a stage of its own where it belongs (the
 * sandbox's reset route) or observe the list (the test), as Connexion's MiddlewarePosition.
 */
import type { RequestListener } from 'node:http';
import type { Brownout } from '../features/deprecation/config.js';
import type { CorsOrigins } from '../features/cors/config.js';
import type { HandlerDeps, Handlers } from '../core/contract.js';
import { createCors, corsStage } from '../features/cors/cors.js';
import { exactlyOnceStage, type ExactlyOnceOptions } from '../features/exactlyOnce/stage.js';
import { Deprecations, deprecationStage, type DeprecatedCallListener } from '../features/deprecation/deprecation.js';
import type { Metrics } from '../features/metrics/metrics.js';
import { metricsStage } from '../features/metrics/stage.js';
import type { RateLimiter } from '../features/rateLimit/rateLimit.js';
import { rateLimitStage } from '../features/rateLimit/stage.js';
import type { Readiness } from '../transport/drain.js';
import { beginExchange, type Exchange } from '../http/exchange.js';
import { createResponder } from '../http/respond.js';
import { ResponseChecker, type ContractViolation } from '../http/responseChecker.js';
import { compiledBackend } from '../http/validation.js';
import type { Logger } from '../shared/logger.js';
import { basePathOf, operationsOf, type OpenApiDocument } from '../shared/spec.js';
import { answerStage } from './answer.js';
import { authenticateStage, type KeyChecker } from './authenticate.js';
import { authorize } from './authorize.js';
import { beforeRouting } from './beforeRouting.js';
import { bodyStage } from './body.js';
import { handlerCaller, handleStage } from './handle.js';
import { probesStage, webStage } from './lanes.js';
import { allowedMethods, matchStage, underBasePath } from './match.js';
import { runStages, type Stage } from './stage.js';
import { validateStage } from './validate.js';

export interface AppOptions {
  document: OpenApiDocument;
  handlers: Handlers;
  deps: HandlerDeps;
  keys: KeyChecker;
  /** Resolves when the database answers. */
  ping: () => Promise<void>;
  logger: Logger;
  /** Check every response against the spec; a mismatch becomes a 500 and a recorded violation. */
  validateResponses: boolean;
  docsFile: string;
  /** CORS_ORIGINS; undefined: no CORS stage. */
  corsOrigins?: CorsOrigins | undefined;
  /** METRICS_PORT set: every request counted and timed; undefined: no metrics stage. */
  metrics?: Pick<Metrics, 'track'> | undefined;
  /** RATE_LIMIT set: requests with a valid key counted per key; undefined: no rate-limit stage. */
  rateLimit?: Pick<RateLimiter, 'consume'> | undefined;
  /** DEPRECATION_BROWNOUTS: when every deprecated operation answers 410. */
  brownouts?: readonly Brownout[] | undefined;
  /** Each call of a deprecated operation: the server counts them per key and in the metrics. */
  onDeprecatedCall?: DeprecatedCallListener | undefined;
  /**
   * Where Idempotency-Key records live (the server's database); undefined only for the app alone,
   * without a database (tests of refusals), where a request with a key is served as one without.
   */
  exactlyOnce: ExactlyOnceOptions | undefined;
  /** Shared with the shutdown (src/transport/drain.ts): /readyz notes when it was asked, and answers 503 while draining. */
  readiness?: Readiness | undefined;
  /** OpenTelemetry traces on: each request is served inside its span; undefined: nothing per request. */
  tracing?: RequestTracing | undefined;
  /** Given the stages in order, returns the list to run (a stage inserted, each observed); the list as it is by default. */
  arrangeStages?: ((stages: Stage[]) => Stage[]) | undefined;
}

/** What the request path asks of tracing (src/features/tracing/tracing.ts implements it). */
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
  /** CORS_ORIGINS set: the CORS headers of an answer to an origin, for node:http's own refusals (src/transport/clientError.ts). */
  corsFor: ((origin: string | undefined) => Record<string, string> | undefined) | undefined;
  /** The stages a request runs through, in order. */
  stages: readonly string[];
}

export function createApp(options: AppOptions): App {
  const { document, logger } = options;
  const basePath = basePathOf(document);
  const backend = compiledBackend(document, basePath, options.validateResponses);
  const checker = new ResponseChecker(document, backend, options.validateResponses, logger);
  const responder = createResponder(checker, backend.getOperations(), logger);
  const serves = (url: string) => underBasePath(basePath, url);
  const cors = options.corsOrigins === undefined ? undefined : createCors({ origins: options.corsOrigins, backend, serves, allowedMethods: (path) => allowedMethods(backend, path) });
  const deprecations = new Deprecations(operationsOf(document), options.brownouts, options.onDeprecatedCall);
  const callHandler = handlerCaller(options.handlers, options.deps);

  const listed: Array<Stage | undefined> = [
    options.metrics && metricsStage(options.metrics),
    cors && corsStage(cors),
    probesStage({ serves, ping: options.ping, readiness: options.readiness, logger }),
    webStage({ serves, responder, specJson: JSON.stringify(document), docsFile: options.docsFile, logger }),
    beforeRouting,
    matchStage(backend),
    authenticateStage(document, options.keys),
    deprecationStage(deprecations),
    authorize,
    options.rateLimit && rateLimitStage(options.rateLimit),
    bodyStage,
    validateStage(backend),
    options.exactlyOnce && exactlyOnceStage(backend.getOperations(), options.exactlyOnce, callHandler),
    handleStage(callHandler),
    answerStage(responder),
  ];
  const configured = listed.filter((stage): stage is Stage => stage !== undefined);
  const stages = options.arrangeStages ? options.arrangeStages(configured) : configured;
  const serve = runStages(stages, (exchange, error) => responder.sendError(exchange, error));

  const { tracing } = options;
  const listener: RequestListener = (req, res) => {
    const exchange = beginExchange(req, res, logger);
    // Tracing off: this test alone; on: the request is served inside its span.
    if (tracing !== undefined) tracing.trace(exchange, serve);
    else serve(exchange);
  };
  return { app: listener, violations: checker.violations, corsFor: cors === undefined ? undefined : (origin) => cors.headersFor(origin), stages: stages.map((stage) => stage.name) };
}
