/**
 * A floor under the server, run by the benchmark as a child (`node --import tsx`): node:http,
 * our key check, our handlers, store and cursor codec, and every header the contract's answer
 * carries (security headers, request id, ETag, deprecation, Link), written as the server writes
 * them (../src/http/exchange.ts, answerJson). What it leaves out is what lies between node:http
 * and the handlers in the real server:
 *
 * - `FLOOR_ROUTER=none`: no router at all. The URL is read by hand, and only the two shapes the
 *   bench sends are understood (`/v1/pets?limit=20`, `/v1/pets/<id>`): the cheapest honest
 *   answer this store and this contract allow on this machine.
 * - `FLOOR_ROUTER=openapi-backend`: openapi-backend, configured as the server configures it
 *   (../src/http/openapiBackend.ts), routes and parses through its router, and its compiled
 *   validators validate, as the server's stages call them (../src/pipeline/); the rest of the
 *   list of stages (../src/pipeline/requestPath.ts) and the responder's contract check and header
 *   merging are left out.
 *
 * So the server's ratio against these two says what each layer costs under the same load.
 * Never a production path: it answers nothing else (404 without a body) and reads no body.
 */
import { createServer } from 'node:http';
import { handlers } from '../generated/handlers.js';
import { KeyCache } from '../src/auth/keyCache.js';
import { loadConfig } from '../src/config.js';
import type { HandlerDeps } from '../src/domain/contract.js';
import { createCursorCodec } from '../src/domain/cursor.js';
import { Deprecations } from '../src/features/deprecation/deprecation.js';
import { entityTag, REVALIDATE } from '../src/domain/etag.js';
import { beginExchange, type Exchange } from '../src/http/exchange.js';
import { answerJson } from '../src/http/respond.js';
import { createOpenApiBackend } from '../src/http/openapiBackend.js';
import { createLogger } from '../src/shared/logger.js';
import { JsonText } from '../src/shared/schemas.js';
import { openDatabase } from '../src/store/database.js';
import { basePathOf, loadBundledSpec, operationsOf } from '../src/shared/spec.js';
import { createApiKeyStore } from '../src/store/apiKeys.js';
import { openStores } from '../generated/stores.js';
import { readSecret } from '../src/store/secrets.js';
import { inUnitOfWork } from '../src/store/queries/unitOfWork.js';

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

const config = loadConfig(process.env);
const document = loadBundledSpec();
const basePath = basePathOf(document);
const database = await openDatabase(config);
const keys = new KeyCache(createApiKeyStore(database.db), { refreshMs: config.keyRefreshMs, maxStaleMs: 5000, onRefreshError: () => undefined });
await keys.startRefreshing();
const deps: HandlerDeps = { ...openStores({ db: database.db, dialect: database.dialect, document }), cursors: createCursorCodec(await readSecret(database.db, 'cursor')), basePath, unitOfWork: (work) => inUnitOfWork(database.db, work) };
const deprecations = new Deprecations(operationsOf(document));
const logger = createLogger('silent');

/** The contract's 200, tagged (every read the bench sends is a conditional operation's), or the handler's answer as it is. */
function write(exchange: Exchange, operationId: string, answer: Answer): void {
  if (answer.status !== 200) {
    answerJson(exchange, answer.status, answer.body);
    return;
  }
  const text = answer.body instanceof JsonText ? answer.body.text : JSON.stringify(answer.body);
  const own = answer.headers ?? {};
  answerJson(exchange, 200, new JsonText(text), { 'Cache-Control': REVALIDATE, ...own, ETag: entityTag(text, own), ...deprecations.get(operationId)?.headers });
}

const authorised = (header: string | undefined): string | undefined => {
  const verdict = keys.check(header?.startsWith('Bearer ') ? header.slice(7) : undefined);
  return typeof verdict === 'object' ? verdict.caller : undefined;
};

function byHand(exchange: Exchange): void {
  const url = exchange.req.url ?? '/';
  const caller = authorised(exchange.req.headers.authorization);
  if (caller === undefined) {
    exchange.res.writeHead(401, { 'Content-Length': '0', Connection: 'close' }).end();
    return;
  }
  // Neither operation has a body (the contract's `never`).
  const request = { path: {}, query: {}, header: {}, cookie: {}, body: undefined, mediaType: undefined, caller };
  if (url === `${basePath}/pets?limit=20`) {
    void handlers.listPets({ ...request, query: { limit: 20 } }, deps).then((answer) => write(exchange, 'listPets', answer));
  } else if (url.startsWith(`${basePath}/pets/`)) {
    void handlers.getPet({ ...request, path: { petId: Number(url.slice(basePath.length + 6)) } }, deps).then((answer) => write(exchange, 'getPet', answer));
  } else {
    exchange.res.writeHead(404, { 'Content-Length': '0' }).end();
  }
}

const backend = createOpenApiBackend(document, basePath);
backend.init();
/** openapi-backend's router and compiled validators, called as the server's stages call them (../src/pipeline/match.ts, validate.ts). */
function withRouter(exchange: Exchange): void {
  const { req, res } = exchange;
  const request = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers as Record<string, string> };
  const operation = backend.router.matchOperation(request);
  const operationId = operation?.operationId;
  if (operation === undefined || (operationId !== 'listPets' && operationId !== 'getPet')) {
    res.writeHead(404, { 'Content-Length': '0' }).end();
    return;
  }
  const parsed = backend.router.parseRequest(request, operation);
  const caller = authorised(req.headers.authorization);
  if (caller === undefined) {
    res.writeHead(401, { 'Content-Length': '0', Connection: 'close' }).end();
    return;
  }
  if (backend.validator.validateRequest(parsed, operation, parsed).errors) {
    res.writeHead(400, { 'Content-Length': '0' }).end();
    return;
  }
  const parts = { path: parsed.params, query: parsed.query, header: {}, cookie: {}, body: undefined, mediaType: undefined, caller };
  // Each operation's handler typed as the server's handle stage types it (../src/pipeline/handle.ts).
  const handler = handlers[operationId] as (parts: unknown, deps: HandlerDeps) => Promise<Answer>;
  void handler(parts, deps).then((answer) => write(exchange, operationId, answer));
}

const router = process.env.FLOOR_ROUTER;
const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (url === '/healthz') {
    res.writeHead(200, { 'Content-Length': '0' }).end();
    return;
  }
  const exchange = beginExchange(req, res, logger);
  if (router === 'none') byHand(exchange);
  else withRouter(exchange);
});
server.keepAliveTimeout = 5000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => {
  keys.stopRefreshing();
  server.close(() => void database.close().then(() => process.exit(0)));
  server.closeAllConnections();
});
// Never outlive the benchmark, even if it is killed without a chance to clean up.
const parent = Number(process.env.BENCH_PARENT);
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 1000).unref();
