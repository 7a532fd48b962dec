/**
 * Access tokens (src/auth/tokens.ts) against a real OpenID provider: oidc-provider (OpenID
 * Certified), started here on a port of its own, issuing JWT access tokens by the
 * client-credentials grant. A made-up operation takes an `oauth2` scheme with scopes, or an API
 * key; the server checks each token's signature against the provider's keys (found by discovery),
 * its issuer, audience and expiry, and the scopes the operation lists. Through the whole list of
 * stages, in process, response checking on.
 */
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../generated/handlers.js';
import type { Handlers } from '../../src/domain/contract.js';
import { tokenChecker } from '../../src/auth/tokens.js';
import { authenticateStage } from '../../src/pipeline/authenticate.js';
import { loadBundledSpec, type OpenApiDocument } from '../../src/shared/spec.js';
import { injectable, type Injectable } from '../support/inject.js';
import { AUDIENCE, clientToken, READER, signingKey, startProvider, WRITER, type RunningProvider, type SigningKey } from '../support/oidcProvider.js';

function withOAuth(): OpenApiDocument {
  const document = structuredClone(loadBundledSpec()) as unknown as { paths: Record<string, unknown>; components: { securitySchemes: Record<string, unknown> } };
  document.components.securitySchemes.oauthExample = { type: 'oauth2', flows: { clientCredentials: { tokenUrl: 'https://issuer.example/token', scopes: { 'pets:read': 'Read', 'pets:write': 'Write' } } } };
  // Fresh objects per operation, as a parsed spec has them (openapi-backend dereferences in place).
  const errors = () => ({ '401': { $ref: '#/components/responses/Unauthorized' }, default: { $ref: '#/components/responses/UnexpectedError' } });
  const answer = () => ({ '204': { description: 'Done.' } });
  document.paths['/examples/kennels'] = {
    get: { operationId: 'listKennelsExample', summary: 'Kennels', tags: ['Pets'], security: [{ oauthExample: ['pets:read'] }, { bearerApiKey: [] }], responses: { ...answer(), ...errors() } },
    post: {
      operationId: 'addKennelExample',
      summary: 'Add a kennel',
      tags: ['Pets'],
      security: [{ oauthExample: ['pets:write'] }],
      responses: { ...answer(), ...errors(), '403': { description: 'The token lacks pets:write.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
    },
  };
  return document as unknown as OpenApiDocument;
}

let key: SigningKey;
let provider: RunningProvider;
let t: Injectable;
const callers: Array<string | undefined> = [];
beforeAll(async () => {
  key = await signingKey('first');
  provider = await startProvider(key);
  const done = async ({ caller }: { caller: string | undefined }) => {
    callers.push(caller);
    return { status: 204, body: undefined };
  };
  t = await injectable({
    document: withOAuth(),
    handlers: { ...handlers, listKennelsExample: done, addKennelExample: done } as unknown as Handlers,
    oauth: { issuer: provider.issuer, audience: AUDIENCE },
  });
});
afterAll(async () => {
  await t.close();
  provider.server.close();
});

const call = (method: 'GET' | 'POST', token?: string) => t.inject({ method, url: '/v1/examples/kennels', auth: false, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });

describe('access tokens of an OpenID provider, by the client-credentials grant', () => {
  it("a token with the operation's scope passes, and the caller is the issuer's client", async () => {
    const token = await clientToken(provider.issuer, WRITER, 'pets:read pets:write');
    callers.length = 0;
    expect((await call('GET', token)).statusCode).toBe(204);
    expect((await call('POST', token)).statusCode).toBe(204);
    expect(callers).toEqual([`${provider.issuer}#${WRITER.id}`, `${provider.issuer}#${WRITER.id}`]);
  });

  it('a valid token without the scope is a 403 naming it (RFC 6750 §3.1); an API key is the alternative where the operation offers one', async () => {
    const token = await clientToken(provider.issuer, READER, 'pets:read');
    expect((await call('GET', token)).statusCode).toBe(204);
    const refused = await call('POST', token);
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"');
    expect(refused.json()).toMatchObject({ code: 'insufficient_scope', status: 403 });
    expect((await t.inject({ method: 'GET', url: '/v1/examples/kennels' })).statusCode).toBe(204);
  });

  it('refused with a 401 naming invalid_token: expired, for another audience, of another issuer, signed by another key, alg none, not a JWT', async () => {
    const now = Math.floor(Date.now() / 1000);
    const signed = (claims: Record<string, unknown>, with_ = key) =>
      new SignJWT({ scope: 'pets:read pets:write', client_id: WRITER.id, ...claims }).setProtectedHeader({ alg: 'ES256', kid: with_.jwk.kid ?? '', typ: 'at+jwt' }).sign(with_.privateKey);
    const base = { iss: provider.issuer, aud: AUDIENCE, sub: WRITER.id, iat: now, exp: now + 300 };
    expect((await call('GET', await signed(base))).statusCode).toBe(204); // the crafted token itself is good
    const stranger = await signingKey('first'); // same kid, another key
    const bad = {
      expired: await signed({ ...base, exp: now - 120 }),
      'another audience': await signed({ ...base, aud: 'https://other.example/v1' }),
      'another issuer': await signed({ ...base, iss: 'http://127.0.0.1:1' }),
      'another key': await signed(base, stranger),
      'alg none': new UnsecuredJWT(base).encode(),
      'not a JWT': 'ask_not-a-token',
    };
    for (const [what, token] of Object.entries(bad)) {
      const refused = await call('GET', token);
      expect(refused.statusCode, what).toBe(401);
      expect(refused.headers['www-authenticate'], what).toBe('Bearer realm="animal-store", error="invalid_token"');
    }
  });

  it('a key rotated at the provider is fetched again on its unknown kid, with no restart; a valid token is kept until it expires; the provider down makes a new token unchecked (503), never valid', async () => {
    const port = Number(new URL(provider.issuer).port);
    const stop = async () => {
      provider.server.closeAllConnections();
      await new Promise<void>((resolve) => provider.server.close(() => resolve()));
    };
    // The server waits 30 s between fetches of the keys (KEYS_COOLDOWN_MS); this checker, none.
    const checker = tokenChecker({ discoveryUrl: `${provider.issuer}/.well-known/openid-configuration`, audience: AUDIENCE, expectedIssuer: provider.issuer, keysCooldownMs: 0 });
    expect(await checker.check(await clientToken(provider.issuer, WRITER, 'pets:read'))).toMatchObject({ caller: `${provider.issuer}#${WRITER.id}` });
    await stop();
    provider = await startProvider(await signingKey('second'), { port });
    const rotated = await clientToken(provider.issuer, WRITER, 'pets:read');
    expect(await checker.check(rotated)).toMatchObject({ caller: `${provider.issuer}#${WRITER.id}` });
    await stop();
    // A token found valid is kept until it expires: answered at once, from memory, the provider down or not.
    const remembered = checker.check(rotated);
    expect(remembered).not.toBeInstanceOf(Promise);
    expect(remembered).toMatchObject({ caller: `${provider.issuer}#${WRITER.id}` });
    const later = tokenChecker({ discoveryUrl: `${provider.issuer}/.well-known/openid-configuration`, audience: AUDIENCE });
    expect(await later.check(rotated)).toBe('unavailable');
    const refused = await call('POST', rotated);
    expect([503, 401], refused.body).toContain(refused.statusCode); // 503 once the server's cooldown lets it fetch; 401 within it (an unknown kid it may not fetch yet)
    expect(refused.statusCode).not.toBe(204);
    provider = await startProvider(await signingKey('third'), { port });
  });

  it('an oauth2 scheme without OAUTH_ISSUER or OAUTH_AUDIENCE stops the start, naming the variable', () => {
    expect(() => authenticateStage(withOAuth(), { check: () => 'invalid' }, { issuer: undefined, audience: AUDIENCE })).toThrow(/^OAUTH_ISSUER is not set: security scheme \w+ \(oauth2\)/);
    expect(() => authenticateStage(withOAuth(), { check: () => 'invalid' }, { issuer: provider.issuer, audience: undefined })).toThrow(/^OAUTH_AUDIENCE is not set/);
  });
});
