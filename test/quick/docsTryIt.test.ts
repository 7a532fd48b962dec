/**
 * What the docs' Try it panel is told about each operation's credentials (scripts/lib/docs/docsTryIt.ts):
 * every scheme its security names, once, as the panel can send it, and a cookie scheme as a cookie
 * a page cannot set. The panel sending each is proved in Chromium by test/loop/spec-loop.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { tryItOperations } from '../../scripts/lib/docs/docsTryIt.js';

const answered = { responses: { '200': { description: 'Done.' } } };
const document = {
  openapi: '3.1.0',
  security: [{ bearerExample: [] }],
  components: {
    securitySchemes: {
      bearerExample: { type: 'http', scheme: 'bearer' },
      basicExample: { type: 'http', scheme: 'Basic' },
      headerExample: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
      cookieExample: { type: 'apiKey', in: 'cookie', name: 'session_key' },
      oauthExample: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: 'https://issuer.example/token', scopes: { 'examples:read': 'Read.', 'examples:write': 'Write.' } } } },
      oidcExample: { type: 'openIdConnect', openIdConnectUrl: 'https://issuer.example/.well-known/openid-configuration' },
    },
  },
  paths: {
    '/examples/every': {
      get: {
        operationId: 'everySchemeExample',
        // Alternatives, one combined requirement (its schemes offered one by one), a scheme named twice.
        security: [{ oauthExample: ['examples:read', 'examples:write'] }, { basicExample: [] }, { headerExample: [], cookieExample: [] }, { bearerExample: [] }, { basicExample: [] }, { oidcExample: [] }],
        ...answered,
      },
    },
    '/examples/inherited': { get: { operationId: 'inheritedExample', ...answered } },
    '/examples/public': { get: { operationId: 'publicExample', security: [], ...answered } },
    '/examples/optional': { get: { operationId: 'optionalKeyExample', security: [{}, { bearerExample: [] }], ...answered } },
  },
};

describe("Try it's credentials, from the contract's security", () => {
  const operations = new Map(tryItOperations(document).map((operation) => [operation.operationId, operation]));

  it('offers each scheme an operation names, once, in its order, as the panel sends it; a cookie scheme is a cookie it cannot send', () => {
    const every = operations.get('everySchemeExample');
    expect(every?.credentials).toEqual([
      { scheme: 'oauthExample', as: 'bearer', holds: 'token', label: 'Access token (oauthExample, scopes examples:read examples:write)' },
      { scheme: 'basicExample', as: 'basic', holds: 'key', label: "API key (basic's user name)" },
      { scheme: 'headerExample', as: 'header', header: 'X-Api-Key', holds: 'key', label: 'API key (header X-Api-Key)' },
      { scheme: 'bearerExample', as: 'bearer', holds: 'key', label: 'API key (bearer)' },
      { scheme: 'oidcExample', as: 'bearer', holds: 'token', label: 'Access token (oidcExample)' },
    ]);
    expect(every?.cookies).toEqual(['session_key']);
  });

  it("takes the document's security where the operation has none, and offers nothing for `security: []`", () => {
    expect(operations.get('inheritedExample')?.credentials.map((each) => each.scheme)).toEqual(['bearerExample']);
    expect(operations.get('publicExample')?.credentials).toEqual([]);
    expect(operations.get('optionalKeyExample')?.credentials.map((each) => each.scheme)).toEqual(['bearerExample']);
  });
});
