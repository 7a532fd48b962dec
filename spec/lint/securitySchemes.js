/**
 * Which security schemes the server checks, and why not the others, and what its 401 says to ask
 * for them: one rule, here, for the server (src/auth/schemes.ts: it stops at the start with the
 * reason, and sends the challenges) and for the lint rules that check the spec first (./rules.js:
 * the scheme, and the WWW-Authenticate a 401 declares). Every scheme the server checks carries an
 * API key of its key store (`http` `bearer` or `basic`, the key as basic's user name; `apiKey` in
 * a header or a cookie) or an issuer's access token (`oauth2`, `openIdConnect`: a JWT in
 * `Authorization: Bearer`, src/auth/tokens.ts).
 */

/** Why `scheme` cannot carry a key the server checks, or undefined when it can. */
export function unsupportedSchemeReason(scheme) {
  if (typeof scheme !== 'object' || scheme === null) return 'not an object';
  if (scheme.type === 'http') {
    const name = typeof scheme.scheme === 'string' ? scheme.scheme.toLowerCase() : undefined;
    return name === 'bearer' || name === 'basic' ? undefined : `http ${scheme.scheme ?? '(no scheme)'}: only bearer and basic carry an API key`;
  }
  if (scheme.type === 'apiKey') {
    if (scheme.in === 'query') return 'an API key in the query string is written into access logs, caches and Referer headers: carry it in a header or a cookie';
    if (scheme.in !== 'header' && scheme.in !== 'cookie') return `apiKey in ${scheme.in ?? '(nowhere)'}: a key is carried in a header or a cookie`;
    return typeof scheme.name === 'string' && scheme.name.length > 0 ? undefined : `apiKey in a ${scheme.in} without a name`;
  }
  if (scheme.type === 'oauth2') return undefined;
  if (scheme.type === 'openIdConnect') return typeof scheme.openIdConnectUrl === 'string' && scheme.openIdConnectUrl.length > 0 ? undefined : 'openIdConnect without an openIdConnectUrl';
  return `${scheme.type ?? '(no type)'} is not supported: http bearer or basic, apiKey in a header or a cookie, oauth2 or openIdConnect`;
}

/** Whether the scheme carries an access token of an issuer (a JWT, checked by its signature) rather than a key of the key store. */
export function carriesToken(scheme) {
  return typeof scheme === 'object' && scheme !== null && (scheme.type === 'oauth2' || scheme.type === 'openIdConnect');
}

export const REALM = 'animal-store';

/** The WWW-Authenticate challenge of a scheme the server checks: `Bearer`, `Basic`, or undefined for an `apiKey` (no HTTP scheme of its own). */
export function schemeChallenge(scheme) {
  if (carriesToken(scheme)) return 'Bearer';
  if (typeof scheme !== 'object' || scheme === null || scheme.type !== 'http' || typeof scheme.scheme !== 'string') return undefined;
  const name = scheme.scheme.toLowerCase();
  return name === 'bearer' ? 'Bearer' : name === 'basic' ? 'Basic' : undefined;
}

/**
 * The WWW-Authenticate of a 401 (RFC 9110 §11.6.1): a challenge per HTTP scheme the operation
 * accepts, in the order it names them; `invalid` when a credential was sent and refused (RFC 6750
 * §3 names the error). An operation that takes only `apiKey` schemes gets the Bearer challenge:
 * a 401 must carry one, and its key is the same kind of key.
 */
export function challengeFor(challenges, invalid) {
  const named = [...new Set(challenges.filter((challenge) => challenge !== undefined))];
  if (named.length === 0) named.push('Bearer');
  return named.map((challenge) => (challenge === 'Bearer' ? `Bearer realm="${REALM}"${invalid ? ', error="invalid_token"' : ''}` : `Basic realm="${REALM}", charset="UTF-8"`)).join(', ');
}
