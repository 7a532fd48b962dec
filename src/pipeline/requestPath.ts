/**
 * The request path, top to bottom, in one list (docs/architecture.md draws it, and
 * test/quick/requestPath.test.ts fails when a request visits a stage twice or out of order). Each
 * stage is handed the rest as `next` (src/http/stage.ts): it goes on, answers, throws a refusal,
 * or wraps the rest. The server's own stages, in CORE_STAGES' order:
 *
 *   exit             the one exit: whatever a stage throws is answered here (./exit.ts)
 *   probes           /healthz, /readyz (./probes.ts)
 *   web              anything outside the base path: Express (./web.ts, src/http/express.ts)
 *   before routing   a doubled Authorization, a trailing slash (./beforeRouting.ts)
 *   match            openapi-backend's router: 404, 405, parameters parsed (./match.ts)
 *   authenticate     who is calling, from the operation's security: 401, or 503 (./authenticate.ts)
 *   body             by media type (./body.ts)
 *   validate         openapi-backend's compiled validators: 400 (./validate.ts)
 *   negotiate        an Accept that allows none of the operation's media types: 406 (./negotiate.ts)
 *   answer           wraps the rest; writes the result: headers, the contract check (./answer/answer.ts, src/http/respond.ts)
 *   ranges           wraps the rest; a 200 of bytes: Accept-Ranges, a Range's 206 or 416 (./answer/ranges.ts)
 *   conditional      wraps the rest; a 200 tagged (ETag), or a 304 for If-None-Match (./answer/conditional.ts)
 *   handle           handlers/<operationId>.ts (./handle.ts)
 *
 * Each feature (src/features/index.ts) puts its stages before the server's stage it names, when it
 * is configured, and nothing otherwise: a request pays for none that is off. With every feature on:
 *
 *   tracing · exit · metrics · cors · webhooks · probes · web · before routing · match · deprecation ·
 *   authenticate · sunset · rate limit · body · validate · negotiate · answer · ranges · conditional ·
 *   exactly once · handle
 *
 * Before all of them, the transport (src/transport/listen.ts: the listener, connections and their
 * bound, node:http's own refusals) and the exchange (src/http/exchange.ts: the request id, the
 * body's framing, the log line). `arrangeStages` lets a caller insert a stage of its own where it
 * belongs (the sandbox's reset route) or observe the list (the test).
 */
import type { RequestListener } from 'node:http';
import type { HandlerDeps, Handlers } from '../domain/contract.js';
import type { PlacedStage } from '../features/feature.js';
import type { Readiness } from '../transport/drain.js';
import { beginExchange } from '../http/exchange.js';
import { createResponder } from '../http/respond.js';
import { Representations } from '../http/shapes/representations.js';
import { ResponseChecker, type ContractViolation } from '../http/responseChecker.js';
import { chainStages, CORE_STAGES, type CoreStage, type Stage } from '../http/stage.js';
import { compiledBackend } from '../http/openapiBackend.js';
import type { Logger } from '../shared/logger.js';
import { basePathOf, type OpenApiDocument } from '../shared/spec.js';
import { answerStage } from './answer/answer.js';
import { conditionalStage } from './answer/conditional.js';
import { rangesStage } from './answer/ranges.js';
import type { OAuthSettings } from '../auth/tokens.js';
import { authenticateStage, type KeyChecker } from './authenticate.js';
import { beforeRouting } from './beforeRouting.js';
import { bodyStage } from './body.js';
import { exitStage } from './exit.js';
import { handlerCaller, handleStage } from './handle.js';
import { probesStage } from './probes.js';
import { webStage } from './web.js';
import { matchStage, underBasePath } from './match.js';
import { negotiateStage } from './negotiate.js';
import { validateStage } from './validate.js';

export interface AppOptions {
  document: OpenApiDocument;
  handlers: Handlers;
  deps: HandlerDeps;
  keys: KeyChecker;
  /** The issuer and audience of access tokens, for a spec with oauth2 or openIdConnect schemes. */
  oauth?: OAuthSettings | undefined;
  /** Resolves when the database answers. */
  ping: () => Promise<void>;
  logger: Logger;
  /** Check every response against the spec; a mismatch becomes a 500 and a recorded violation. */
  validateResponses: boolean;
  docsFile: string;
  /** Shared with the shutdown (src/transport/drain.ts): /readyz notes when it was asked, and answers 503 while draining. */
  readiness?: Readiness | undefined;
  /** The started features' stages (src/features/), each put before the stage it names. */
  featureStages?: readonly PlacedStage[] | undefined;
  /** Given the stages in order, returns the list to run (a stage inserted, each observed); the list as it is by default. */
  arrangeStages?: ((stages: Stage[]) => Stage[]) | undefined;
}

export interface App {
  /** The request listener for node:http. */
  app: RequestListener;
  /** Responses that broke the contract (only recorded when validateResponses is on). */
  violations: ContractViolation[];
  /** The stages a request runs through, in order. */
  stages: readonly string[];
}

export function createApp(options: AppOptions): App {
  const { document, logger } = options;
  const basePath = basePathOf(document);
  const backend = compiledBackend(document, basePath, options.validateResponses);
  const checker = new ResponseChecker(document, backend, options.validateResponses, logger);
  const representations = new Representations(backend.definition.components?.schemas);
  const responder = createResponder(checker, logger, representations);
  const operations = backend.getOperations();
  const serves = (url: string) => underBasePath(basePath, url);
  const core: Record<CoreStage, Stage> = {
    exit: exitStage(responder),
    probes: probesStage({ serves, ping: options.ping, readiness: options.readiness, logger }),
    web: webStage({ serves, responder, specJson: JSON.stringify(document), docsFile: options.docsFile, logger }),
    'before routing': beforeRouting,
    match: matchStage(backend),
    authenticate: authenticateStage(document, options.keys, options.oauth),
    body: bodyStage,
    validate: validateStage(backend),
    negotiate: negotiateStage(operations),
    answer: answerStage(responder),
    ranges: rangesStage(operations),
    conditional: conditionalStage(operations, representations),
    handle: handleStage(handlerCaller(options.handlers, options.deps), operations, (exchange, status, removed) =>
      checker.writeOnlyAnswered(exchange.operation?.operationId, status, removed, `${exchange.req.method ?? ''} ${exchange.req.url ?? ''}`),
    ),
  };
  const placed = options.featureStages ?? [];
  const listed = CORE_STAGES.flatMap((name) => [...placed.filter((feature) => feature.before === name).map((feature) => feature.stage), core[name]]);
  const stages = options.arrangeStages ? options.arrangeStages(listed) : listed;
  const serve = chainStages(stages, (exchange, error) => responder.sendError(exchange, error));
  const listener: RequestListener = (req, res) => serve(beginExchange(req, res, logger));
  return { app: listener, violations: checker.violations, stages: stages.map((stage) => stage.name) };
}
