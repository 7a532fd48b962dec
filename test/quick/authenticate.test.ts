/**
 * The key check (src/pipeline/authenticate.ts) evaluates each operation's
 * security as OpenAPI says: its own `security`, else the document's; an alternative passes when
 * every scheme of it holds a valid key; `security: []` is public. A key that cannot be checked is
 * a 503, a missing one a 401 with a bare challenge, a wrong one a 401 naming `invalid_token`.
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
    },
  },
  security: [{ bearer: [] }],
  paths: {
    '/a': { get: { operationId: 'defaultOnly', responses: ok } },
    '/b': { get: { operationId: 'eitherOne', security: [{ partner: [] }, { bearer: [] }], responses: ok } },
    '/c': { get: { operationId: 'bothNeeded', security: [{ bearer: [], partner: [] }], responses: ok } },
    '/d': { get: { operationId: 'open', security: [], responses: ok } },
    '/e': { get: { operationId: 'optional', security: [{ bearer: [] }, {}], responses: ok } },
  },
} as unknown as OpenApiDocument;

const backend = createOpenApiBackend(document, '/');
backend.init();
const keys = { check: (token: string | undefined): KeyVerdict => (token === 'good' || token === 'partner' ? { caller: token } : token === 'flaky' ? 'unavailable' : 'invalid') };
const stage = authenticateStage(document, keys);

/** The verdict for a GET of `path` with `headers`: the caller the rest of the path is given, or the refusal the stage throws. */
function verdict(path: string, headers: Record<string, string>): { caller: string | undefined } | { refused: number; challenge: string | undefined } {
  const req = { method: 'GET', url: path, headers, rawHeaders: [] } as unknown as IncomingMessage;
  const exchange: Exchange = beginExchange(req, {} as ServerResponse, createLogger('silent'));
  exchange.operation = backend.router.matchOperation({ method: 'GET', path, headers });
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
  it('a key that cannot be checked is a 503 to retry, never a pass', () => {
    expect(verdict('/a', { authorization: 'Bearer flaky' })).toMatchObject({ refused: 503 });
  });
});
