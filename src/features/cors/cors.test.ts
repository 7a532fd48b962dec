/**
 * CORS on the real server (CORS_ORIGINS), its requests handed to the request path in process (the
 * Express lane over its socket): preflights answered before
 * routing and the key check, with methods and headers derived from the contract; every actual
 * response to an allowed origin readable (Error bodies too), with the headers a client reads
 * exposed; nothing for another origin, or when CORS_ORIGINS is unset. The browser's view of the
 * same is test/browser/browser-cors.test.ts.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startProcess, stopProcess } from '../../../scripts/lib/processes.js';
import { ConfigError } from '../../shared/env.js';
import { readCorsOrigins } from './config.js';
import { createCors, PREFLIGHT_MAX_AGE_S, requestHeadersOf, responseHeadersOf } from './cors.js';
import { createOpenApiBackend } from '../../http/openapiBackend.js';
import { projectRoot } from '../../shared/paths.js';
import { basePathOf, loadBundledSpec, type OpenApiDocument } from '../../shared/spec.js';
import { startTestServer, type TestServer } from '../../../test/support/server.js';

const PAGE = 'http://localhost:5173';
const OTHER = 'http://evil.example';
const spec = loadBundledSpec();

const CORS_HEADERS = ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-max-age', 'access-control-expose-headers', 'access-control-allow-credentials'];

/** Resolves a local `#/…` $ref of the bundled contract. */
function resolve<T>(value: T | { $ref: string }): T {
  if (typeof value !== 'object' || value === null || !('$ref' in value)) return value;
  let current: unknown = spec;
  for (const key of value.$ref.slice(2).split('/')) current = (current as Record<string, unknown>)[key];
  return current as T;
}

/** The methods the contract declares for a path, upper case: what a preflight must allow. */
function specMethods(path: string): string[] {
  const item = spec.paths?.[path] ?? {};
  // HEAD wherever GET is, right after it: the server answers it (RFC 9110 §9.3.2).
  return ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].flatMap((m) => (m === 'get' && m in item && !('head' in item) ? ['GET', 'HEAD'] : m in item ? [m.toUpperCase()] : []));
}

/** Every response header any operation declares, read from the contract independently of src/. */
function specResponseHeaders(document: OpenApiDocument = spec): string[] {
  const names = new Set<string>();
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item ?? {})) {
      if (typeof operation !== 'object' || operation === null || !('responses' in operation)) continue;
      for (const response of Object.values(operation.responses ?? {})) {
        for (const name of Object.keys(resolve(response as { headers?: object }).headers ?? {})) names.add(name.toLowerCase());
      }
    }
  }
  return [...names];
}

/** Every request header the document lets a client send (header parameters, `apiKey` schemes in a header), in lower case. */
function specRequestHeaders(document: OpenApiDocument = spec): string[] {
  const names = new Set<string>();
  for (const item of Object.values(document.paths ?? {})) {
    const pathItem = resolve(item as object) as { parameters?: unknown[] } & Record<string, unknown>;
    const lists = [pathItem.parameters ?? [], ...Object.values(pathItem).map((op) => (typeof op === 'object' && op !== null && 'responses' in op ? ((op as { parameters?: unknown[] }).parameters ?? []) : []))];
    for (const parameter of lists.flat()) {
      const { in: where, name } = resolve(parameter as object) as { in?: string; name?: string };
      if (where === 'header' && name) names.add(name.toLowerCase());
    }
  }
  for (const scheme of Object.values(document.components?.securitySchemes ?? {})) {
    const { type, in: where, name } = scheme as { type?: string; in?: string; name?: string };
    if (type === 'apiKey' && where === 'header' && name) names.add(name.toLowerCase());
  }
  return [...names];
}

function list(value: string | null): string[] {
  return (value ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
}

function corsHeadersOf(response: Response): Record<string, string> {
  const found: Record<string, string> = {};
  for (const name of CORS_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) found[name] = value;
  }
  return found;
}

function preflight(t: TestServer, path: string, origin: string, method = 'POST', requestHeaders = 'authorization, content-type'): Promise<Response> {
  return t.request(`${path}`, { auth: false, method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': requestHeaders } });
}

describe('CORS_ORIGINS in the configuration', () => {
  const read = (value: string | undefined) => readCorsOrigins({ CORS_ORIGINS: value });
  const refusal = (value: string) => {
    try {
      read(value);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error(`CORS_ORIGINS="${value}" was accepted`);
  };

  it('unset or empty is no CORS (the production default)', () => {
    expect(readCorsOrigins({})).toBeUndefined();
    expect(read('')).toBeUndefined();
    expect(read('  ')).toBeUndefined();
  });

  it('takes * alone, or exact origins separated by commas', () => {
    expect(read('*')).toBe('*');
    expect(read('http://localhost:5173')).toEqual(['http://localhost:5173']);
    expect(read(' https://app.example.com , http://127.0.0.1:3000,https://app.example.com')).toEqual(['https://app.example.com', 'http://127.0.0.1:3000']);
  });

  it('refuses what would never match a browser Origin, naming the variable and the fix', () => {
    expect(refusal('http://localhost:5173/')).toMatch(/^CORS_ORIGINS: .*write it as "http:\/\/localhost:5173"/);
    expect(refusal('https://App.Example.com')).toMatch(/^CORS_ORIGINS: .*"https:\/\/app\.example\.com"/);
    expect(refusal('https://app.example.com:443')).toMatch(/^CORS_ORIGINS: .*"https:\/\/app\.example\.com"/);
    expect(refusal('https://app.example.com/path')).toMatch(/^CORS_ORIGINS: /);
    expect(refusal('localhost:5173')).toMatch(/^CORS_ORIGINS: .*not an http\(s\) origin/);
    expect(refusal('app.example.com')).toMatch(/^CORS_ORIGINS: .*not an http\(s\) origin/);
    expect(refusal('null')).toMatch(/^CORS_ORIGINS: /);
    expect(refusal('ftp://files.example.com')).toMatch(/^CORS_ORIGINS: .*not an http\(s\) origin/);
    expect(refusal('*, http://localhost:5173')).toMatch(/^CORS_ORIGINS must be "\*" alone/);
    expect(refusal('http://a.example,,http://b.example')).toMatch(/^CORS_ORIGINS has an empty entry/);
  });

  it('a bad value stops `npm start`\'s entry point with exit code 2 and a message naming it', async () => {
    const server = startProcess(join(projectRoot, 'node_modules', '.bin', 'tsx'), ['src/main.ts'], {
      cwd: projectRoot,
      env: { ...process.env, CORS_ORIGINS: 'http://localhost:5173/', PORT: '0', SQLITE_PATH: '/nonexistent/never-opened.sqlite' },
    });
    const timer = setTimeout(() => void stopProcess(server, 'SIGKILL'), 45_000);
    const exit = await server.exited;
    clearTimeout(timer);
    expect(server.output()).toContain('Configuration error: CORS_ORIGINS');
    expect(exit).toEqual({ code: 2, signal: null });
  }, 60_000);
});

describe('what the preflight and the exposed headers are derived from', () => {
  /** A copy of the contract with a header parameter, a header apiKey scheme and a response header added. */
  function extended(): OpenApiDocument {
    const copy = structuredClone(spec);
    const list = copy.paths?.['/pets']?.get;
    if (!list) throw new Error('no listPets');
    list.parameters = [...(list.parameters ?? []), { name: 'X-Tenant', in: 'header', required: false, schema: { type: 'string' } }];
    const ok = resolve(list.responses['200'] as object) as { headers?: Record<string, unknown> };
    ok.headers = { ...ok.headers, 'X-RateLimit-Remaining': { schema: { type: 'integer' } } };
    copy.components = { ...copy.components, securitySchemes: { ...copy.components?.securitySchemes, partnerKey: { type: 'apiKey', in: 'header', name: 'X-Partner-Key' } } };
    return copy;
  }

  it('the allowed request headers: Authorization, Content-Type, X-Request-Id and every header the contract lets a client send', () => {
    const backend = createOpenApiBackend(spec, basePathOf(spec));
    backend.init();
    // The contract's own header parameters, whatever they are today (If-None-Match, Idempotency-Key…), read from the spec.
    const lower = (names: string[]) => names.map((name) => name.toLowerCase()).sort();
    expect(lower(requestHeadersOf(backend))).toEqual(lower(['Authorization', 'Content-Type', 'X-Request-Id', ...specRequestHeaders()]));
    expect(specRequestHeaders()).toEqual(expect.arrayContaining(['if-none-match']));
    const wider = createOpenApiBackend(extended(), basePathOf(spec));
    wider.init();
    expect(lower(requestHeadersOf(wider))).toEqual(lower(['Authorization', 'Content-Type', 'X-Request-Id', ...specRequestHeaders(extended())]));
    expect(lower(requestHeadersOf(wider))).toEqual(expect.arrayContaining(['x-tenant', 'x-partner-key']));
  });

  it('the exposed response headers: the server\'s own and every response header any operation declares', () => {
    const backend = createOpenApiBackend(spec, basePathOf(spec));
    backend.init();
    const exposed = responseHeadersOf(backend).map((name) => name.toLowerCase());
    for (const name of ['link', 'location', 'deprecation', 'sunset', 'x-request-id', 'retry-after', ...specResponseHeaders()]) expect(exposed).toContain(name);
    expect(specResponseHeaders()).toEqual(expect.arrayContaining(['link', 'location', 'deprecation', 'sunset', 'www-authenticate', 'etag']));
    const wider = createOpenApiBackend(extended(), basePathOf(spec));
    wider.init();
    expect(responseHeadersOf(wider)).toContain('X-RateLimit-Remaining');
    const cors = createCors({ origins: '*', backend: wider, serves: () => true, allowedMethods: () => ['GET'] });
    expect(list(cors.exposeHeaders)).toContain('x-ratelimit-remaining');
    expect(list(cors.allowHeaders)).toContain('x-tenant');
  });
});

describe(`CORS_ORIGINS=${PAGE}: the real server`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite', { env: { CORS_ORIGINS: PAGE } }, { inProcess: true });
  });
  afterAll(async () => {
    await t?.close();
  });
  afterEach(() => {
    expect(t.server.violations.splice(0), 'responses that broke the contract').toEqual([]);
  });

  it('answers a preflight with 204, before routing and without a key: the origin, the path\'s methods from the contract, the headers, a max age', async () => {
    for (const [path, specPath] of [['/pets', '/pets'], ['/pets/7', '/pets/{petId}'], ['/pets?limit=2', '/pets']] as const) {
      const response = await preflight(t, path, PAGE, path === '/pets/7' ? 'GET' : 'POST');
      expect(response.status, path).toBe(204);
      expect(await response.text()).toBe('');
      expect(response.headers.get('access-control-allow-origin')).toBe(PAGE);
      expect(list(response.headers.get('vary'))).toContain('origin');
      expect(response.headers.get('access-control-allow-methods')).toBe(specMethods(specPath).join(', '));
      expect(list(response.headers.get('access-control-allow-headers'))).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-request-id']));
      expect(response.headers.get('access-control-max-age')).toBe(String(PREFLIGHT_MAX_AGE_S));
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
    // listPets and createPet at least; whatever else the spec gives /pets is in the list above.
    expect(specMethods('/pets')).toEqual(expect.arrayContaining(['GET', 'HEAD', 'POST']));
  });

  it('a preflight for a path the API lacks goes on to the 404, readable by the page', async () => {
    const response = await preflight(t, '/nothing', PAGE, 'GET');
    expect(response.status).toBe(404);
    expect(response.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(response.headers.get('access-control-allow-methods')).toBeNull();
  });

  it('an OPTIONS without Access-Control-Request-Method is no preflight: routing answers it (405)', async () => {
    const response = await t.request(`/pets`, { auth: false, method: 'OPTIONS', headers: { Origin: PAGE, Authorization: `Bearer ${t.key}` } });
    expect(response.status).toBe(405);
    expect(response.headers.get('access-control-allow-origin')).toBe(PAGE);
  });

  it('every actual response to the page is readable, with the headers a client reads exposed: 200, 201, 400, 401, 404, 405, 413, and outside the API', async () => {
    const auth = { Authorization: `Bearer ${t.key}`, Origin: PAGE };
    const json = { ...auth, 'Content-Type': 'application/json' };
    const cases: Array<[string, number, Promise<Response>]> = [
      ['listPets', 200, t.request(`/pets`, { auth: false, headers: auth })],
      ['createPet', 201, t.request(`/pets`, { auth: false, method: 'POST', headers: json, body: JSON.stringify({ name: 'Biscuit', categoryId: 2 }) })],
      ['400', 400, t.request(`/pets?limit=0`, { auth: false, headers: auth })],
      ['401', 401, t.request(`/pets`, { auth: false, headers: { Origin: PAGE } })],
      ['404', 404, t.request(`/pets/999999`, { auth: false, headers: auth })],
      ['405', 405, t.request(`/pets`, { auth: false, method: 'DELETE', headers: auth })],
      ['413', 413, t.request(`/pets`, { auth: false, method: 'POST', headers: json, body: JSON.stringify({ name: 'x'.repeat(70_000), categoryId: 1 }) })],
      // Outside the API, over the socket: Express answers these (light-my-request loses its bodies).
      ['/openapi.json', 200, fetch(`${t.origin}/openapi.json`, { headers: { Origin: PAGE } })],
      ['/healthz', 200, fetch(`${t.origin}/healthz`, { headers: { Origin: PAGE } })],
    ];
    const expected = [...specResponseHeaders(), 'link', 'location', 'deprecation', 'sunset', 'x-request-id'];
    for (const [name, status, pending] of cases) {
      const response = await pending;
      await response.arrayBuffer();
      expect(response.status, name).toBe(status);
      expect(response.headers.get('access-control-allow-origin'), name).toBe(PAGE);
      expect(list(response.headers.get('vary')), name).toContain('origin');
      expect(list(response.headers.get('access-control-expose-headers')), name).toEqual(expect.arrayContaining(expected));
      expect(response.headers.get('access-control-allow-credentials'), name).toBeNull();
      // CORP governs no-cors loads only; a CORS fetch from the page is not affected (see src/features/cors/cors.ts).
      expect(response.headers.get('cross-origin-resource-policy'), name).toBe('same-origin');
    }
  });

  it('another origin gets no CORS headers: its preflight gets routing\'s 405, its requests are served without them', async () => {
    const pre = await preflight(t, '/pets', OTHER);
    expect(pre.status).toBe(405);
    expect(corsHeadersOf(pre)).toEqual({});
    const actual = await t.request(`/pets`, { auth: false, headers: { Origin: OTHER, Authorization: `Bearer ${t.key}` } });
    expect(actual.status).toBe(200);
    expect(corsHeadersOf(actual)).toEqual({});
    expect(actual.headers.get('vary')).toBeNull();
    // The Origin must match exactly: same host on another port or scheme is another origin.
    for (const near of ['http://localhost:5174', 'https://localhost:5173', 'http://LOCALHOST:5173', 'null']) {
      const response = await preflight(t, '/pets', near);
      expect(corsHeadersOf(response), near).toEqual({});
    }
  });

  it('a request without Origin gets no CORS headers', async () => {
    const response = await t.request('/pets');
    expect(response.status).toBe(200);
    expect(corsHeadersOf(response)).toEqual({});
    expect(response.headers.get('vary')).toBeNull();
  });
});

describe('CORS_ORIGINS=*: the real server', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite', { env: { CORS_ORIGINS: '*' } }, { inProcess: true });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('allows any origin, echoing it', async () => {
    for (const origin of [PAGE, OTHER, 'https://app.example.com:8443']) {
      const pre = await preflight(t, '/pets', origin);
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe(origin);
      const actual = await t.request(`/pets`, { auth: false, headers: { Origin: origin } });
      expect(actual.status).toBe(401);
      expect(actual.headers.get('access-control-allow-origin')).toBe(origin);
    }
    expect(t.server.violations).toEqual([]);
  });
});

describe('CORS_ORIGINS unset (production default): the real server', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite', {}, { inProcess: true });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('sends no CORS headers: a preflight gets routing\'s 405, an actual request none either', async () => {
    const pre = await preflight(t, '/pets', PAGE);
    expect(pre.status).toBe(405);
    expect(corsHeadersOf(pre)).toEqual({});
    const actual = await t.request(`/pets`, { auth: false, headers: { Origin: PAGE, Authorization: `Bearer ${t.key}` } });
    expect(actual.status).toBe(200);
    expect(corsHeadersOf(actual)).toEqual({});
    expect(t.server.violations).toEqual([]);
  });
});
