/**
 * How each security scheme of the spec carries an API key, read from a request: where to look and
 * what a 401 says to ask for it. A scheme the server cannot check stops the start, with its reason
 * (`npm run lint` says the same of the spec before that: spec/lint/rules.js).
 *
 * - `http` `bearer`: `Authorization: Bearer <key>` (RFC 6750; the scheme name case-insensitive).
 * - `http` `basic`: `Authorization: Basic <base64 of "key:">`, the key as the user name and an
 *   empty password (`curl -u <key>:`), as Stripe's API takes its keys (RFC 7617).
 * - `apiKey` in a header or a cookie, by its `name`.
 * - `oauth2`, `openIdConnect`: an access token in `Authorization: Bearer`, checked by ./tokens.ts.
 */
import { carriesToken, schemeChallenge, unsupportedSchemeReason, type Challenge } from '../../spec/lint/securitySchemes.js';

export { challengeFor, REALM } from '../../spec/lint/securitySchemes.js';

/** What a request carries for one scheme: the key, `''` for a credential that cannot be a key (malformed), or undefined for none. */
export type CredentialReader = (headers: Readonly<Record<string, string | string[] | undefined>>, cookies: Readonly<Record<string, string | undefined>>) => string | undefined;

export interface SchemeReader {
  read: CredentialReader;
  /** An issuer's access token (oauth2, openIdConnect: src/auth/tokens.ts), else a key of the key store. */
  token: boolean;
  /** The scheme's WWW-Authenticate challenge, for the HTTP authentication schemes; an `apiKey` has none. */
  challenge: Challenge | undefined;
}

export type SecurityScheme = { type?: string; scheme?: string; in?: string; name?: string; openIdConnectUrl?: string };

const BEARER = /^bearer +([^ ]+) *$/i;
const BASIC = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/** The token of an `Authorization: Bearer <token>` header, or undefined when it is not of that form (RFC 6750: no credential). */
function bearerToken(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  return BEARER.exec(header)?.[1];
}

/** The key of an `Authorization: Basic` header: its user name, with an empty password; `''` when it is not that. */
function basicKey(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string' || !/^basic(?: |$)/i.test(header)) return undefined;
  const encoded = BASIC.exec(header)?.[1];
  if (encoded === undefined) return '';
  const pair = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = pair.indexOf(':');
  // The password must be empty: a key is one secret, and a pair of other credentials is no key.
  return colon > 0 && colon === pair.length - 1 ? pair.slice(0, colon) : '';
}

/** Where the scheme's key is in a request; throws, naming the scheme and why, for one the server cannot check. */
export function schemeReader(name: string, scheme: SecurityScheme): SchemeReader {
  const reason = unsupportedSchemeReason(scheme);
  if (reason !== undefined) throw new Error(`security scheme ${name}: ${reason} (npm run lint says so too)`);
  const challenge = schemeChallenge(scheme);
  const token = carriesToken(scheme);
  if (challenge === 'Bearer') return { read: (headers) => bearerToken(headers.authorization), challenge, token };
  if (challenge === 'Basic') return { read: (headers) => basicKey(headers.authorization), challenge, token };
  const key = scheme.name ?? '';
  if (scheme.in === 'cookie') return { read: (_headers, cookies) => cookies[key], challenge: undefined, token };
  const header = key.toLowerCase();
  return {
    read: (headers) => {
      const value = headers[header];
      return typeof value === 'string' ? value : undefined;
    },
    challenge: undefined,
    token,
  };
}
