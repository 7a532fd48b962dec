/**
 * The key check (src/pipeline/authenticate.ts) evaluates each operation's
 * security as OpenAPI says: its own `security`, else the document's; an alternative passes when
 * every scheme of it holds a valid key; `security: []` is public. A key that cannot be checked is
 * a 503, a missing one a 401 with a bare challenge, a wrong one a 401 naming `invalid_token`. The key
 * travels as each scheme says: bearer, basic (the key as the user name), a header, a cookie.
 * Called directly on an exchange the router has matched: no socket, no server.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { KeyVerdict } from '../../src/auth/keyCache.js';
import type { Refusal } from '../../src/errors/refusal.js';
import { beginExchange, type Exchange } from '../../src/http/exchange.js';
import { createOpenApiBackend } from '../../src/http/openapiBackend.js';
import { createLogger } from '../../src/shared/logger.js';
import { authenticateStage } from '../../src/pipeline/authenticate.js';
import type { OpenApiDocument } from '../../src/shared/spec.js';

const ok = { '200': { description: 'ok' } };
const document = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  components: {
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer' },
      partner: { type: 'apiKey', in: 'header', name: 'X-Partner-Key' },
      basic: { type: 'http', scheme: 'basic' },
      session: { type: 'apiKey', in: 'cookie', name: 'store_key' },
    },
  },
  security: [{ bearer: [] }],
  paths: {
    '/a': { get: { operationId: 'defaultOnly', responses: ok } },
    '/b': { get: { operationId: 'eitherOne', security: [{ partner: [] }, { bearer: [] }], responses: ok } },
    '/c': { get: { operationId: 'bothNeeded', security: [{ bearer: [], partner: [] }], responses: ok } },
    '/d': { get: { operationId: 'open', security: [], responses: ok } },
    '/e': { get: { operationId: 'optional', security: [{ bearer: [] }, {}], responses: ok } },
    '/f': { get: { operationId: 'basicOnly', security: [{ basic: [] }], responses: ok } },
    '/g': { get: { operationId: 'bearerOrBasic', security: [{ bearer: [] }, { basic: [] }], responses: ok } },
    '/h': { get: { operationId: 'cookieOnly', security: [{ session: [] }], responses: ok } },
    '/i': { get: { operationId: 'scoped', security: [{ bearer: ['pets:write'] }], responses: ok } },
  },
} as unknown as OpenApiDocument;

const backend = createOpenApiBackend(document, '/');
backend.init();
const keys = {
  check: (token: string | undefined): KeyVerdict =>
    token === 'good' || token === 'partner' ? { caller: token } : token === 'reader' ? { caller: token, scopes: new Set(['pets:read']) } : token === 'flaky' ? 'unavailable' : 'invalid',
};
const stage = authenticateStage(document, keys);

/** The verdict for a GET of `path` with `headers`: the caller the rest of the path is given, or the refusal the stage throws. */
function verdict(path: string, headers: Record<string, string>): { caller: string | undefined } | { refused: number; challenge: string | undefined } {
  const req = { method: 'GET', url: path, headers, rawHeaders: [] } as unknown as IncomingMessage;
  const exchange: Exchange = beginExchange(req, {} as ServerResponse, createLogger('silent'));
  const request = { method: 'GET', path, headers };
  exchange.operation = backend.router.matchOperation(request);
  if (exchange.operation) exchange.request = backend.router.parseRequest(request, exchange.operation);
  try {
    let passed: { caller: string | undefined } | undefined;
    stage.run(exchange, (admitted) => {
      passed = { caller: admitted.caller };
      return undefined;
    });
    if (passed === undefined) throw new Error('the stage neither went on nor refused');
    return passed;
  } catch (error) {
    const refusal = error as Refusal;
    return { refused: refusal.status, challenge: refusal.headers?.['WWW-Authenticate'] };
  }
}

describe('the key check, from each operation\'s security', () => {
  it('the document\'s default applies; a missing key is a 401 with a bare challenge, a wrong one names invalid_token', () => {
    expect(verdict('/a', { authorization: 'Bearer good' })).toEqual({ caller: 'good' });
    expect(verdict('/a', {})).toEqual({ refused: 401, challenge: 'Bearer realm="animal-store"' });
    expect(verdict('/a', { authorization: 'Bearer nope' })).toEqual({ refused: 401, challenge: 'Bearer realm="animal-store", error="invalid_token"' });
    // The scheme name is case-insensitive (RFC 6750); anything but `Bearer <token>` is no credential.
    expect(verdict('/a', { authorization: 'bEaReR good' })).toEqual({ caller: 'good' });
    expect(verdict('/a', { authorization: 'Basic good' })).toMatchObject({ refused: 401, challenge: 'Bearer realm="animal-store"' });
  });
  it('an alternative that passes authorizes; every scheme of one must pass', () => {
    expect(verdict('/b', { 'x-partner-key': 'partner' })).toEqual({ caller: 'partner' });
    expect(verdict('/b', { authorization: 'Bearer good' })).toEqual({ caller: 'good' });
    expect(verdict('/c', { authorization: 'Bearer good' })).toMatchObject({ refused: 401 });
    expect(verdict('/c', { authorization: 'Bearer good', 'x-partner-key': 'partner' })).toEqual({ caller: 'good' });
  });
  it('security: [] is public, and an empty alternative ({}) makes the key optional', () => {
    expect(verdict('/d', {})).toEqual({ caller: undefined });
    expect(verdict('/e', {})).toEqual({ caller: undefined });
    expect(verdict('/e', { authorization: 'Bearer good' })).toEqual({ caller: 'good' });
  });
  it('http basic: the key is the user name and the password empty (curl -u <key>:); anything else is a credential refused; the 401 asks for Basic', () => {
    const basic = (pair: string) => `Basic ${Buffer.from(pair).toString('base64')}`;
    expect(verdict('/f', { authorization: basic('good:') })).toEqual({ caller: 'good' });
    expect(verdict('/f', { authorization: `bAsIc ${Buffer.from('good:').toString('base64')}` })).toEqual({ caller: 'good' });
    expect(verdict('/f', {})).toEqual({ refused: 401, challenge: 'Basic realm="animal-store", charset="UTF-8"' });
    for (const authorization of [basic('good:secret'), basic('good'), basic(':good'), basic('nope:'), 'Basic ***', 'Basic'])
      expect(verdict('/f', { authorization }), authorization).toEqual({ refused: 401, challenge: 'Basic realm="animal-store", charset="UTF-8"' });
    // A Bearer header is no credential for a basic scheme, and the other way round.
    expect(verdict('/f', { authorization: 'Bearer good' })).toMatchObject({ refused: 401 });
    expect(verdict('/a', { authorization: basic('good:') })).toEqual({ refused: 401, challenge: 'Bearer realm="animal-store"' });
  });
  it('an operation that takes bearer or basic takes either, and its 401 offers both challenges, in the order it names them', () => {
    expect(verdict('/g', { authorization: 'Bearer good' })).toEqual({ caller: 'good' });
    expect(verdict('/g', { authorization: `Basic ${Buffer.from('good:').toString('base64')}` })).toEqual({ caller: 'good' });
    expect(verdict('/g', {})).toEqual({ refused: 401, challenge: 'Bearer realm="animal-store", Basic realm="animal-store", charset="UTF-8"' });
    expect(verdict('/g', { authorization: 'Bearer nope' })).toEqual({ refused: 401, challenge: 'Bearer realm="animal-store", error="invalid_token", Basic realm="animal-store", charset="UTF-8"' });
  });
  it('apiKey in a cookie: read by its name among the request\'s cookies; an apiKey-only operation\'s 401 carries the Bearer challenge (a 401 must carry one)', () => {
    expect(verdict('/h', { cookie: 'theme=dark; store_key=good' })).toEqual({ caller: 'good' });
    expect(verdict('/h', { cookie: 'store_key=nope' })).toEqual({ refused: 401, challenge: 'Bearer realm="animal-store", error="invalid_token"' });
    expect(verdict('/h', { authorization: 'Bearer good' })).toEqual({ refused: 401, challenge: 'Bearer realm="animal-store"' });
  });
  it('a scheme the server cannot check stops the start, naming it and why: a key in the query string, another http scheme, mutual TLS, openIdConnect without its URL', () => {
    const withScheme = (scheme: Record<string, unknown>) => ({ ...document, components: { securitySchemes: { odd: scheme } } }) as unknown as OpenApiDocument;
    expect(() => authenticateStage(withScheme({ type: 'apiKey', in: 'query', name: 'key' }), keys)).toThrow(/security scheme odd: an API key in the query string is written into access logs/);
    expect(() => authenticateStage(withScheme({ type: 'http', scheme: 'digest' }), keys)).toThrow(/security scheme odd: http digest: only bearer and basic/);
    expect(() => authenticateStage(withScheme({ type: 'apiKey', in: 'cookie' }), keys)).toThrow(/without a name/);
    expect(() => authenticateStage(withScheme({ type: 'mutualTLS' }), keys)).toThrow(/security scheme odd: mutualTLS is not supported/);
    expect(() => authenticateStage(withScheme({ type: 'openIdConnect' }), keys)).toThrow(/security scheme odd: openIdConnect without an openIdConnectUrl/);
  });
  it('a key made with scopes holds those only: without the one an operation lists, a 403 naming it; a key made without holds every scope', () => {
    expect(verdict('/i', { authorization: 'Bearer good' })).toEqual({ caller: 'good' });
    expect(verdict('/i', { authorization: 'Bearer reader' })).toEqual({ refused: 403, challenge: 'Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"' });
    expect(verdict('/a', { authorization: 'Bearer reader' })).toEqual({ caller: 'reader' });
  });
  it('a key that cannot be checked is a 503 to retry, never a pass', () => {
    expect(verdict('/a', { authorization: 'Bearer flaky' })).toMatchObject({ refused: 503 });
  });
});
