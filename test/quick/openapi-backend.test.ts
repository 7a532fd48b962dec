/**
 * What the server relies on openapi-backend for, with the project's Ajv setup and the patch in
 * patches/ applied at install (patch-package): routing, parameter parsing for each style,
 * coercion that reaches the handler in every location (upstream issue #144), strict decimal
 * numerals (src/http/numerals.ts), the operation list built once per definition, the order of
 * matching templates; called as the request path's stages call them (its router, its compiled
 * validators). In process, no HTTP.
 */
import { describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../../src/shared/spec.js';
import { createOpenApiBackend, detailsOf } from '../../src/http/openapiBackend.js';

const integer = { type: 'integer', minimum: 1 };
const document = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  servers: [{ url: 'https://api.test.example/v1' }],
  paths: {
    '/things/{thingId}': {
      parameters: [{ name: 'thingId', in: 'path', required: true, schema: integer }],
      get: {
        operationId: 'getThing',
        parameters: [
          { name: 'ids', in: 'query', style: 'form', explode: true, schema: { type: 'array', items: integer } },
          { name: 'tags', in: 'query', style: 'form', explode: false, schema: { type: 'array', items: { type: 'string' } } },
          { name: 'range', in: 'query', style: 'deepObject', explode: true, schema: { type: 'object', additionalProperties: false, properties: { min: integer, max: integer } } },
          { name: 'ratio', in: 'query', schema: { type: 'number' } },
          { name: 'X-Page-Size', in: 'header', schema: integer },
          { name: 'session', in: 'cookie', schema: { type: 'string', pattern: '^[a-z]+$' } },
          { name: 'flag', in: 'query', schema: { type: 'boolean' } },
        ],
        responses: { '200': { description: 'ok' } },
      },
    },
    '/things/special': { get: { operationId: 'getSpecial', responses: { '200': { description: 'ok' } } } },
    '/things/x{suffix}': {
      get: { operationId: 'getXThing', parameters: [{ name: 'suffix', in: 'path', required: true, schema: { type: 'string' } }], responses: { '200': { description: 'ok' } } },
    },
  },
} as unknown as OpenApiDocument;

type Seen = { operationId: string | undefined; params: unknown; query: unknown; headers: Record<string, unknown>; cookies: unknown } | { errors: ReturnType<typeof detailsOf> };

const api = createOpenApiBackend(document, '/v1');
api.init();

/** Routes, parses and validates in place, as src/pipeline/match.ts and validate.ts do; what a handler would get. */
async function get(path: string, headers: Record<string, string> = {}): Promise<Seen> {
  const request = { method: 'GET', path, headers };
  const operation = api.router.matchOperation(request);
  if (operation === undefined) throw new Error(`no operation for GET ${path}`);
  const parsed = api.router.parseRequest(request, operation);
  const { errors } = api.validator.validateRequest(parsed, operation, parsed);
  if (errors) return { errors: detailsOf(errors) };
  return { operationId: operation.operationId, params: parsed.params, query: parsed.query, headers: parsed.headers as Record<string, unknown>, cookies: parsed.cookies };
}

describe('openapi-backend as the router and parameter parser', () => {
  it('routes the literal path before the template, and templates by their own segment', async () => {
    expect(await get('/v1/things/special')).toMatchObject({ operationId: 'getSpecial' });
    expect(await get('/v1/things/7')).toMatchObject({ operationId: 'getThing', params: { thingId: 7 } });
  });

  it('patched: of two templates that match, the one with more literal characters wins, on every request', async () => {
    for (let i = 0; i < 3; i++) {
      expect(await get('/v1/things/xyz')).toMatchObject({ operationId: 'getXThing' });
      expect(await get('/v1/things/9')).toMatchObject({ operationId: 'getThing' });
    }
  });

  it('patched: header names arrive lower-cased and repeated cookie headers are all parsed', async () => {
    const seen = await get('/v1/things/special', { 'X-Trace': 't', Cookie: ['a=1', 'b=2'] } as unknown as Record<string, string>);
    expect(seen).toMatchObject({ headers: { 'x-trace': 't' }, cookies: { a: '1', b: '2' } });
  });

  it('parses form arrays (exploded and not), deepObject, numbers and booleans, and coerces path, header and cookie values for the handler', async () => {
    const seen = await get('/v1/things/3?ids=1&ids=2&tags=a,b&range[min]=1&range[max]=9&ratio=0.5&flag=true', { 'x-page-size': '25', cookie: 'session=abc' });
    expect(seen).toMatchObject({
      params: { thingId: 3 },
      query: { ids: [1, 2], tags: ['a', 'b'], range: { min: 1, max: 9 }, ratio: 0.5, flag: true },
      cookies: { session: 'abc' },
    });
    expect('headers' in seen && seen.headers['x-page-size']).toBe(25);
  });

  it('a single value of an array parameter is an array of one', async () => {
    expect(await get('/v1/things/3?ids=4')).toMatchObject({ query: { ids: [4] } });
  });

  it('numbers only in plain decimal: 0x10, 1e1, +5, 01, " 5" and 1.0 are 400s naming the field, wherever the parameter is', async () => {
    const cases: Array<[string, Record<string, string>, { in: string; field: string; message?: string }]> = [
      ['/v1/things/0x10', {}, { in: 'path', field: 'thingId' }],
      ['/v1/things/01', {}, { in: 'path', field: 'thingId' }],
      ['/v1/things/1?ids=1&ids=1e1', {}, { in: 'query', field: 'ids.1' }],
      ['/v1/things/1?range[min]=%2B5', {}, { in: 'query', field: 'range.min' }],
      ['/v1/things/1?ratio=%205', {}, { in: 'query', field: 'ratio', message: 'must be number' }],
      ['/v1/things/1', { 'x-page-size': '1.0' }, { in: 'header', field: 'x-page-size' }],
    ];
    for (const [path, headers, detail] of cases) {
      const seen = await get(path, headers);
      expect(seen, path).toEqual({ errors: expect.arrayContaining([expect.objectContaining({ message: 'must be integer', ...detail }) as unknown]) });
    }
    expect(await get('/v1/things/1?ratio=1.5e3')).toMatchObject({ query: { ratio: 1500 } });
  });

  it('patched: an unknown query parameter is a 400 naming it, even one qs drops (__proto__, constructor, toString, an empty name)', async () => {
    for (const [query, field] of [['__proto__=', '__proto__'], ['%5F%5Fproto%5F%5F=1', '__proto__'], ['constructor=1', 'constructor'], ['ids=1&toString=', 'toString'], ['hasOwnProperty', 'hasOwnProperty'], ['=x', ''], ['nope=1', 'nope']] as const) {
      const seen = await get(`/v1/things/1?${query}`);
      expect(seen, query).toEqual({ errors: [expect.objectContaining({ in: 'query', field })] });
    }
    // A name qs files under a declared parameter (deepObject, brackets escaped or not) is that parameter.
    expect(await get('/v1/things/1?range%5Bmin%5D=2&ids[]=3')).toMatchObject({ query: { range: { min: 2 }, ids: [3] } });
  });

  it('a cookie that breaks its schema is a header detail that names the cookie', async () => {
    const seen = await get('/v1/things/1', { cookie: 'session=ABC' });
    expect(seen).toEqual({ errors: [expect.objectContaining({ in: 'header', field: 'session' })] });
  });

  it('patched: the operation list is built once per definition, and again when the definition changes', () => {
    const first = api.router.getOperations();
    expect(api.router.getOperations()).toBe(first);
    const router = api.router as unknown as { definition: unknown };
    const original = router.definition;
    router.definition = { ...(original as object) };
    try {
      expect(api.router.getOperations()).not.toBe(first);
      expect(api.router.getOperations().map((o) => o.operationId)).toEqual(first.map((o) => o.operationId));
    } finally {
      router.definition = original;
    }
  });

  it('patched: the routes are compiled once per definition; an exact path wins, then the most specific template; 404 and 405 as before', () => {
    const routes = api.router.getRoutes();
    expect(api.router.getRoutes()).toBe(routes);
    expect(routes.templates.map((t) => t.operation.operationId)).toEqual(['getSpecial', 'getXThing', 'getThing']);
    const match = (method: string, path: string) => api.router.matchOperation({ method, path, headers: {} }, true)?.operationId;
    // Normalised without copying the request: no leading slash, a query string, an upper-case method.
    expect(match('GET', 'v1/things/special?x=1')).toBe('getSpecial');
    expect(match(' GET ', '/v1/things/5/')).toBe('getThing');
    expect(() => match('POST', '/v1/things/5')).toThrow(/^405-/);
    expect(() => match('GET', '/v1/nothing')).toThrow(/^404-/);
    expect(() => match('GET', '/v2/things/5')).toThrow(/^404-/);
    expect(api.router.matchOperation({ method: 'POST', path: '/v1/things/5', headers: {} })).toBeUndefined();
  });

  it('patched: parseRequest normalises path and method in the one copy it returns', () => {
    const parsed = api.router.parseRequest({ method: 'GET', path: 'v1/things/5?ids=1', headers: { 'X-A': 'b' } }, api.router.getOperation('getThing'));
    expect(parsed).toMatchObject({ method: 'get', path: '/v1/things/5', params: { thingId: '5' }, query: { ids: '1' }, headers: { 'x-a': 'b' } });
    expect(api.router.normalizeRequest({ method: 'Post', path: 'a?b', headers: {} })).toEqual({ method: 'post', path: '/a', headers: {} });
  });

  it('patched: an operation\'s query parameters are tabled once per parameter list (by name, and those with JSON content); a new list gets a new table', () => {
    const operation = api.router.getOperation('getThing');
    if (!operation) throw new Error('getThing is in the document');
    const table = api.router.getQueryParameters(operation);
    expect(api.router.getQueryParameters(operation)).toBe(table);
    expect([...table.byName.keys()]).toEqual(['ids', 'tags', 'range', 'ratio', 'flag']);
    expect(table.json).toEqual([]);
    const original = operation.parameters;
    operation.parameters = [{ name: 'q', in: 'query', style: 'pipeDelimited', explode: false, schema: { type: 'array', items: { type: 'string' } } }];
    try {
      expect([...api.router.getQueryParameters(operation).byName.keys()]).toEqual(['q']);
      expect(api.router.parseRequest({ method: 'GET', path: '/v1/things/1?q=a|b', headers: {} }, operation).query).toEqual({ q: ['a', 'b'] });
    } finally {
      operation.parameters = original;
    }
  });

  it('patched: the request is parsed once, and the operation\'s parse reuses its headers, cookies and query', async () => {
    const parsed = api.router.parseRequest({ method: 'GET', path: '/v1/things/3?tags=a,b', headers: { Cookie: 'session=x', 'X-A': '1' } });
    const again = api.router.parseRequest({ method: 'GET', path: '/v1/things/3?ignored=1', headers: {} }, api.router.getOperation('getThing'), parsed);
    expect(again.headers).toBe(parsed.headers);
    expect(again.cookies).toBe(parsed.cookies);
    expect(again).toMatchObject({ params: { thingId: '3' }, query: { tags: ['a', 'b'] }, cookies: { session: 'x' } });
  });

  it('patched: path parameters parsed as bath parsed them, by one compiled RegExp per template: decoded, a bad escape a URIError', () => {
    const operation = api.router.getOperation('getThing');
    const parse = (path: string) => api.router.parseRequest({ method: 'GET', path, headers: {} }, operation).params;
    expect(parse('/v1/things/a%20b%2Fc')).toEqual({ thingId: 'a b/c' });
    expect(parse('/v1/things/5/')).toEqual({ thingId: '5' });
    expect(() => parse('/v1/things/%E0%A4%A')).toThrow(URIError);
    expect(parse('/v1/things/1/2')).toEqual({});
  });

  it('patched: one path-parameter parser per template, kept across requests', async () => {
    await get('/v1/things/3');
    const parsers = (api.router as unknown as { pathParamParsers: Map<string, unknown> }).pathParamParsers;
    const parser = parsers.get('/things/{thingId}');
    expect(parser).toBeTypeOf('function');
    expect(await get('/v1/things/4')).toMatchObject({ params: { thingId: 4 } });
    expect(parsers.get('/things/{thingId}')).toBe(parser);
  });
});
