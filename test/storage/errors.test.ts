import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../generated/handlers.js';
import { resources, type Stores } from '../../generated/stores.js';
import { createCursorCodec } from '../../src/domain/cursor.js';
import { createApp, type App } from '../../src/pipeline/requestPath.js';
import { createLogger } from '../../src/shared/logger.js';
import { loadBundledSpec } from '../../src/shared/spec.js';
import { injectable, inProcessFetch, type InProcessFetch } from '../support/inject.js';
import { describeEachTarget } from '../support/server.js';

describeEachTarget('every error is an Error body', (t) => {
  it('404 not_found: an unknown path under /v1 and outside it', async () => {
    for (const url of [`${t().api}/nothing`, `${t().api}/store/orders`, `${t().origin}/elsewhere`]) {
      const response = await fetch(url, { headers: { Authorization: `Bearer ${t().key}` } });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ code: 'not_found', message: expect.any(String), status: 404 });
    }
  });

  it('405 method_not_allowed with an Allow header naming the methods the path has', async () => {
    // Read from the contract, so an operation added to a path (a DELETE on /pets/{petId}, say)
    // moves what is probed instead of failing here. Allow lists them in the router's order.
    const document = loadBundledSpec();
    const routerOrder = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
    let probed = 0;
    for (const [template, path] of [['/pets', '/pets'], ['/pets/{petId}', '/pets/1']] as const) {
      const item = (document.paths?.[template] ?? {}) as Record<string, unknown>;
      const declared = routerOrder.filter((method) => item[method] !== undefined);
      // HEAD wherever GET is, right after it (RFC 9110 §9.3.2).
      const allow = declared.flatMap((method) => (method === 'get' && item.head === undefined ? ['GET', 'HEAD'] : [method.toUpperCase()])).join(', ');
      for (const method of ['DELETE', 'PUT', 'PATCH'].filter((m) => !declared.includes(m.toLowerCase()))) {
        const response = await t().request(path, { method });
        expect(response.status, `${method} ${path}`).toBe(405);
        expect(response.headers.get('allow')).toBe(allow);
        expect(await response.json()).toMatchObject({ code: 'method_not_allowed', status: 405 });
        probed++;
      }
    }
    expect(probed).toBeGreaterThanOrEqual(2);
  });

  it('a method-override header does not turn a GET into anything else', async () => {
    const response = await t().request('/pets', { headers: { 'X-HTTP-Method-Override': 'DELETE' } });
    expect(response.status).toBe(200);
  });

  it('security headers are set; no X-Powered-By; an error has no ETag and is no-store', async () => {
    const response = await t().request('/pets?limit=0');
    expect(response.status).toBe(400);
    expect(response.headers.get('x-powered-by')).toBeNull();
    expect(response.headers.get('etag')).toBeNull();
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    // A 200 of a conditional read is the one exception (test/storage/conditional.test.ts): tagged, revalidated.
    const page = await t().request('/pets');
    expect(page.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(page.headers.get('cache-control')).toBe('private, no-cache');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('GET /healthz and /readyz answer without a key', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const response = await fetch(`${t().origin}${path}`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: 'ok' });
    }
  });

  it('GET /openapi.json serves the bundled contract', async () => {
    const response = await fetch(`${t().origin}/openapi.json`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(loadBundledSpec());
  });
});

/** The app in process (nothing here is about the network), accepting one key; `options` replace the defaults (a failing store, a logger). */
async function listenApp(key: string, options: Partial<Parameters<typeof createApp>[0]>): Promise<{ app: App; request: InProcessFetch; close(): Promise<void> }> {
  const { app, close } = await injectable({
    keys: { check: (token) => (token === key ? { caller: 'test' } : 'invalid') },
    validateResponses: false,
    docsFile: '/nonexistent/index.html',
    ...options,
  });
  return { app, request: inProcessFetch(app.app), close };
}

/** A server whose store fails in a chosen way: the only way to reach 500 and 503 on purpose. */
describe('unexpected failures', () => {
  let failure: Error = new Error('boom');
  let app: App;
  let request: InProcessFetch = () => Promise.reject(new Error('not started'));
  let close = () => Promise.resolve();
  const logs: string[] = [];
  // Every method of every store fails, stores and methods added later too: neither needs an edit here.
  const failingStore = new Proxy({}, { get: () => () => Promise.reject(failure) });
  const failing = Object.fromEntries(Object.keys(resources).map((name) => [name, failingStore])) as Stores;

  beforeAll(async () => {
    ({ app, request, close } = await listenApp(`ask_${'k'.repeat(43)}`, {
      deps: { ...failing, cursors: createCursorCodec('test'), basePath: '/v1', unitOfWork: (work) => work() },
      ping: () => Promise.reject(failure),
      logger: createLogger('info', { write: (line: string) => logs.push(line) }),
      validateResponses: true,
    }));
  });
  afterAll(() => close());
  const get = (path: string) => request(`${path}`, { headers: { Authorization: `Bearer ask_${'k'.repeat(43)}` } });

  it('500 internal_error: logged with the request id; no stack or SQL in the body', async () => {
    failure = new Error('SQLITE_ERROR: near "selec": syntax error in select * from pets');
    const response = await get('/v1/pets');
    expect(response.status).toBe(500);
    const body = (await response.json()) as { code: string; message: string; status: number };
    expect(body).toMatchObject({ code: 'internal_error', status: 500 });
    expect(body.message).not.toMatch(/SQLITE|select|at .*\.js/);
    const requestId = response.headers.get('x-request-id') ?? '';
    expect(body.message).toContain(requestId);
    expect(logs.some((l) => l.includes(requestId) && l.includes('syntax error'))).toBe(true);
    expect(app.violations).toEqual([]);
  });

  it('503 service_unavailable when the database cannot be reached; /readyz fails, /healthz does not', async () => {
    failure = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const response = await get('/v1/pets/1');
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(response.headers.get('sunset')).not.toBeNull();
    expect((await request(`/readyz`)).status).toBe(503);
    expect((await request(`/healthz`)).status).toBe(200);
    expect(app.violations).toEqual([]);
  });

  it('GET /docs before the docs are built is a 404 Error that says how to build them', async () => {
    // Over a socket: Express (the lane outside the API) swaps the response's prototype, and with it
    // the capture an in-process request relies on.
    const server = createServer(app.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/docs`);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: 'not_found', message: expect.stringContaining('npm run docs') });
  });
});

/** Every answer is written with one flat header list: a handler's header that names one of the exchange's replaces it. */
describe('an answer that sets one of the exchange headers', () => {
  let request: InProcessFetch = () => Promise.reject(new Error('not started'));
  let close = () => Promise.resolve();
  const key = `ask_${'h'.repeat(43)}`;

  beforeAll(async () => {
    // A spec whose getPet declared these headers would type this handler; this one is cast instead.
    const getPet = (async () => ({ status: 200, body: { id: 1, name: 'Rex', categoryId: 1, status: 'available' }, headers: { 'cache-control': 'max-age=60', 'X-Request-Id': 'from-the-handler' } })) as unknown as typeof handlers.getPet;
    ({ request, close } = await listenApp(key, { handlers: { ...handlers, getPet } }));
  });
  afterAll(() => close());

  it('is sent once, with the handler’s value, whatever its case', async () => {
    const response = await request(`/v1/pets/1`, { headers: { Authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    // fetch joins a repeated header with ", ": a single value means a single header.
    expect(response.headers.get('x-request-id')).toBe('from-the-handler');
    expect(response.headers.get('cache-control')).toBe('max-age=60');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
  });
});

/** In test and dev the response check says what broke and what to change, in the log and in the 500 that replaces the answer. */
describe('an answer that breaks the contract', () => {
  let app: App;
  let request: InProcessFetch = () => Promise.reject(new Error('not started'));
  let close = () => Promise.resolve();
  const key = `ask_${'c'.repeat(43)}`;
  const logs: string[] = [];

  beforeAll(async () => {
    // What a Petstore-style handler answers for "not found": a 404 with no body.
    const getPet = (async () => ({ status: 404, body: undefined })) as unknown as typeof handlers.getPet;
    ({ app, request, close } = await listenApp(key, { handlers: { ...handlers, getPet }, logger: createLogger('error', { write: (line: string) => logs.push(line) }), validateResponses: true }));
  });
  afterAll(() => close());

  it('names the operation, the status, the missing Error body and the fix', async () => {
    const response = await request(`/v1/pets/1`, { headers: { Authorization: `Bearer ${key}` } });
    expect(response.status).toBe(500);
    const body = (await response.json()) as { message: string };
    expect(body.message).toContain('getPet 404: the body is not an Error body of the contract');
    expect(body.message).toContain('answer an Error body with status 404 (errorBody in src/domain/contract.ts)');
    expect(body.message).toContain('no body, but the spec declares content for this status');
    expect(app.violations.splice(0)).toEqual([expect.objectContaining({ operationId: 'getPet', status: 404 })]);
    expect(logs.join('\n')).toContain('getPet 404: the body is not an Error body of the contract');
  });
});

/** A result the answer cannot be written from (a body JSON cannot serialise) is a logged 500, and the server serves on. */
describe('an answer that cannot be written', () => {
  let request: InProcessFetch = () => Promise.reject(new Error('not started'));
  let close = () => Promise.resolve();
  const key = `ask_${'w'.repeat(43)}`;
  const logs: string[] = [];

  beforeAll(async () => {
    // JSON.stringify throws on a BigInt: the throw comes from the answer, after the handler settled.
    const getPet = (async () => ({ status: 200, body: { id: 1n } })) as unknown as typeof handlers.getPet;
    ({ request, close } = await listenApp(key, { handlers: { ...handlers, getPet }, logger: createLogger('error', { write: (line: string) => logs.push(line) }) }));
  });
  afterAll(() => close());

  it('is answered 500 with an Error body, and the next request is served', async () => {
    for (let i = 0; i < 2; i++) {
      const response = await request(`/v1/pets/1`, { headers: { Authorization: `Bearer ${key}` } });
      expect(response.status).toBe(500);
      expect(await response.json()).toMatchObject({ status: 500, code: 'internal_error' });
    }
    expect(logs.join('\n')).toContain('unexpected failure');
  });
});
