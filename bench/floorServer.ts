/**
 * A floor under the budgets, run by the benchmark as a child (`node --import tsx`): node:http,
 * our key check, our handlers, store and cursor codec, and every header the contract's answer
 * carries (security headers, request id, ETag, deprecation, Link), written in one `writeHead`.
 * What it leaves out is what lies between node:http and the handlers in the real server:
 *
 * - `FLOOR_ROUTER=none`: no router at all. The URL is read by hand, and only the two shapes the
 *   bench sends are understood (`/v1/pets?limit=20`, `/v1/pets/<id>`): the cheapest honest
 *   answer this store and this contract allow on this machine.
 * - `FLOOR_ROUTER=openapi-backend`: openapi-backend, configured as the server configures it
 *   (../src/http/validation.ts, ../src/http/security.ts), routes, parses, checks the key and
 *   validates; our adapter (../src/http/api.ts, exchange, responder) is left out.
 *
 * So the server's ratio against these two says what each layer costs under the same load.
 * Never a production path: it answers nothing else (404 without a body) and reads no body.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { Context } from 'openapi-backend';
import { handlers } from '../handlers/index.js';
import { KeyCache } from '../src/auth/keyCache.js';
import { loadConfig } from '../src/config.js';
import type { HandlerDeps } from '../src/contract.js';
import { createCursorCodec } from '../src/cursor.js';
import { deprecationHeaders } from '../src/http/deprecation.js';
import { entityTag, REVALIDATE } from '../src/http/etag.js';
import { SECURITY_HEADERS } from '../src/http/securityHeaders.js';
import { callerOf, registerSecurityHandlers } from '../src/http/security.js';
import { createOpenApiBackend } from '../src/http/validation.js';
import { JsonText } from '../src/schemas.js';
import { openDatabase } from '../src/server.js';
import { basePathOf, loadBundledSpec, operationsOf } from '../src/spec.js';
import { createApiKeyStore } from '../src/store/apiKeys.js';
import { createPetStore } from '../src/store/pets.js';
import { readSecret } from '../src/store/secrets.js';

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

const config = loadConfig(process.env);
const document = loadBundledSpec();
const basePath = basePathOf(document);
const database = await openDatabase(config);
const keys = new KeyCache(createApiKeyStore(database.db), { refreshMs: config.keyRefreshMs, maxStaleMs: 5000, onRefreshError: () => undefined });
await keys.startRefreshing();
const deps: HandlerDeps = { pets: createPetStore(database.db, database.dialect), cursors: createCursorCodec(await readSecret(database.db, 'cursor')), basePath };
const deprecations = deprecationHeaders(operationsOf(document));
const securityHeaders = Object.entries(SECURITY_HEADERS).filter(([name]) => name !== 'Cache-Control').flat();

/** The contract's 200 (tagged, as every read the bench sends is) or a bare status, all headers in one writeHead. */
function write(res: ServerResponse, operationId: string, answer: Answer): void {
  if (answer.status !== 200) {
    res.writeHead(answer.status, { 'Content-Length': '0' }).end();
    return;
  }
  const text = answer.body instanceof JsonText ? answer.body.text : JSON.stringify(answer.body);
  const own = answer.headers ?? {};
  const payload = Buffer.from(text, 'utf8');
  const headers: string[] = [...securityHeaders, 'X-Request-Id', randomUUID(), 'Cache-Control', REVALIDATE, 'ETag', entityTag(text, own)];
  for (const [name, value] of Object.entries({ ...own, ...deprecations.get(operationId) })) headers.push(name, value);
  headers.push('Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(payload.length));
  res.writeHead(200, headers).end(payload);
}

const authorised = (header: string | undefined): string | undefined => {
  const verdict = keys.check(header?.startsWith('Bearer ') ? header.slice(7) : undefined);
  return typeof verdict === 'object' ? verdict.caller : undefined;
};

function byHand(url: string, authorization: string | undefined, res: ServerResponse): void {
  const caller = authorised(authorization);
  if (caller === undefined) {
    res.writeHead(401, { 'Content-Length': '0', Connection: 'close' }).end();
    return;
  }
  // Neither operation has a body (the contract's `never`).
  const request = { path: {}, query: {}, header: {}, cookie: {}, body: undefined as never, caller };
  if (url === `${basePath}/pets?limit=20`) {
    void handlers.listPets({ ...request, query: { limit: 20 } }, deps).then((answer) => write(res, 'listPets', answer));
  } else if (url.startsWith(`${basePath}/pets/`)) {
    void handlers.getPet({ ...request, path: { petId: Number(url.slice(basePath.length + 6)) } }, deps).then((answer) => write(res, 'getPet', answer));
  } else {
    res.writeHead(404, { 'Content-Length': '0' }).end();
  }
}

const backend = createOpenApiBackend(document, basePath);
const routed = (operationId: 'listPets' | 'getPet') => async (context: Context, res: ServerResponse) => {
  const { request } = context;
  const parts = { path: request.params, query: request.query, header: {}, cookie: {}, body: undefined, caller: callerOf(context) };
  // Each operation's handler typed as the server's adapter types it (../src/http/api.ts).
  const handler = handlers[operationId] as (parts: unknown, deps: HandlerDeps) => Promise<Answer>;
  write(res, operationId, await handler(parts, deps));
};
const bare = (status: number) => (_context: Context, res: ServerResponse) => res.writeHead(status, { 'Content-Length': '0' }).end();
backend.register({ listPets: routed('listPets'), getPet: routed('getPet'), notFound: bare(404), methodNotAllowed: bare(405), notImplemented: bare(501), validationFail: bare(400), unauthorizedHandler: bare(401) });
registerSecurityHandlers(backend, document, keys);
backend.init();

const router = process.env.FLOOR_ROUTER;
const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (url === '/healthz') res.writeHead(200, { 'Content-Length': '0' }).end();
  else if (router === 'none') byHand(url, req.headers.authorization, res);
  else void backend.handleRequest({ method: req.method ?? 'GET', path: url, headers: req.headers as Record<string, string> }, res);
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
