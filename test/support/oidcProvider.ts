/**
 * A real OpenID provider for tests and the bench: oidc-provider (OpenID Certified) on a port of its
 * own, issuing JWT access tokens (RFC 9068, ES256) for AUDIENCE by the client-credentials grant to
 * two clients, one that may hold every scope and one that may hold only those that read (`…:read`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';

export const AUDIENCE = 'https://api.animal-store.example/v1';
export const WRITER = { id: 'writer-example', secret: 'writer-example-secret-0123456789abcdef' };
export const READER = { id: 'reader-example', secret: 'reader-example-secret-0123456789abcdef' };

export type SigningKey = { jwk: JWK; privateKey: CryptoKey };
export interface RunningProvider {
  server: Server;
  issuer: string;
}

export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' } };
}

export interface ProviderOptions {
  /** 0 (the default): any free port. */
  port?: number;
  /** How long its access tokens are valid, in seconds (oidc-provider's own default without). */
  tokenTtlS?: number;
  /** The scopes it grants (the Animal Store's by default). */
  scopes?: readonly string[];
}

/** An OpenID provider signing with `key`; resolves with its server and issuer. */
export async function startProvider(key: SigningKey, { port = 0, tokenTtlS, scopes = ['pets:read', 'pets:write'] }: ProviderOptions = {}): Promise<RunningProvider> {
  const every = scopes.join(' ');
  const reading = scopes.filter((scope) => scope.endsWith(':read')).join(' ');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      { client_id: WRITER.id, client_secret: WRITER.secret, grant_types: ['client_credentials'], redirect_uris: [], response_types: [], id_token_signed_response_alg: 'ES256', scope: every },
      { client_id: READER.id, client_secret: READER.secret, grant_types: ['client_credentials'], redirect_uris: [], response_types: [], id_token_signed_response_alg: 'ES256', scope: reading },
    ],
    jwks: { keys: [key.jwk] },
    ...(tokenTtlS === undefined ? {} : { ttl: { ClientCredentials: tokenTtlS } }),
    scopes: [...scopes],
    features: {
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: every, audience: AUDIENCE, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
      },
    },
  });
  server.on('request', provider.callback());
  return { server, issuer };
}

/** An access token for `client` with `scope`, by the client-credentials grant. */
export async function clientToken(issuer: string, client: { id: string; secret: string }, scope: string, attempt = 1): Promise<string> {
  let response: Response;
  try {
    response = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource: AUDIENCE }),
    });
  } catch (error) {
    // A connection kept alive to a provider that was restarted: fetch's pool learns it is gone on its use.
    if (attempt === 1) return clientToken(issuer, client, scope, 2);
    throw error;
  }
  const body = (await response.json()) as { access_token?: string };
  if (body.access_token === undefined) throw new Error(`the provider gave no token: ${JSON.stringify(body)}`);
  return body.access_token;
}
