/**
 * OAuth 2.0 and OpenID Connect access tokens: JWTs (RFC 9068) verified with jose against the
 * issuer's signing keys, found by discovery (its `/.well-known/openid-configuration`, or the
 * spec's `openIdConnectUrl`). Checked: the signature, by an asymmetric algorithm of the allow-list
 * (never `none`, never an HMAC secret: a public key cannot be mistaken for one), `iss`, `aud`,
 * `exp` and `nbf` with a small skew. Keys are cached; an unknown `kid` refetches them, at most once
 * every 30 s (jose's cooldown), so a rotation needs no restart and made-up kids cannot hammer the
 * issuer. An issuer that cannot be reached makes the token unchecked (a 503 to retry), never valid.
 * A token found valid is kept, by its text, until it expires (at most KEPT_TOKEN_MS): a client's
 * next calls with it are answered from memory, as an API key's are, without a signature to check
 * again; only valid verdicts are kept, and at most KEPT_TOKENS of them.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';

/** What a token is worth: who calls and the scopes it holds, or why not. */
export type TokenVerdict = { caller: string; scopes: ReadonlySet<string> } | 'invalid' | 'unavailable';

/** OAUTH_ISSUER and OAUTH_AUDIENCE (src/config.ts): the issuer of an `oauth2` scheme's tokens, and what they must be for. */
export interface OAuthSettings {
  issuer: string | undefined;
  audience: string | undefined;
}

export interface TokenChecker {
  /** A token seen valid before is answered at once; any other is verified. */
  check(token: string): TokenVerdict | Promise<TokenVerdict>;
}

/** Asymmetric signatures only (RFC 8725 §3.1): an HMAC or `none` is refused. */
export const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** Seconds of clock difference tolerated on `exp` and `nbf`. */
export const CLOCK_SKEW_S = 30;
/** At most one refetch of the keys in this time, whatever kids tokens name. */
export const KEYS_COOLDOWN_MS = 30_000;
/** A discovery that failed is tried again after this, not on every request. */
export const DISCOVERY_RETRY_MS = 5_000;
const FETCH_TIMEOUT_MS = 5_000;
/** Valid tokens kept at most this long, however far their `exp`: a key the issuer stops publishing stops them within it. */
export const KEPT_TOKEN_MS = 5 * 60_000;
/** Valid tokens kept at once; past it the oldest go first. */
export const KEPT_TOKENS = 10_000;

type Valid = Exclude<TokenVerdict, 'invalid' | 'unavailable'>;

/** Errors that say the token is bad; any other (the issuer unreachable, a broken key set) says it could not be checked. */
const REFUSED = new Set(['ERR_JWT_EXPIRED', 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED', 'ERR_JOSE_ALG_NOT_ALLOWED', 'ERR_JWS_INVALID', 'ERR_JWT_INVALID', 'ERR_JWKS_NO_MATCHING_KEY', 'ERR_JOSE_NOT_SUPPORTED', 'ERR_JWKS_MULTIPLE_MATCHING_KEYS']);

/** The scopes a token holds: `scope` (RFC 9068: space-separated) or `scp` (a list, as some issuers write it). */
export function scopesOf(payload: JWTPayload): Set<string> {
  const { scope, scp } = payload as { scope?: unknown; scp?: unknown };
  const listed = typeof scope === 'string' ? scope.split(' ') : Array.isArray(scp) ? scp : typeof scp === 'string' ? scp.split(' ') : [];
  return new Set(listed.filter((item): item is string => typeof item === 'string' && item.length > 0));
}

interface Discovered {
  issuer: string;
  keys: JWTVerifyGetKey;
}

/** The issuer and its keys' address, from an OpenID Connect discovery document. */
async function discover(url: string, keysCooldownMs: number): Promise<Discovered> {
  const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
  if (!response.ok) throw new Error(`discovery at ${url} answered ${response.status}`);
  const document = JSON.parse(await response.text()) as { issuer?: unknown; jwks_uri?: unknown };
  if (typeof document.issuer !== 'string' || typeof document.jwks_uri !== 'string') throw new Error(`discovery at ${url} names no issuer or jwks_uri`);
  return { issuer: document.issuer, keys: createRemoteJWKSet(new URL(document.jwks_uri), { cooldownDuration: keysCooldownMs, timeoutDuration: FETCH_TIMEOUT_MS }) };
}

/**
 * Checks tokens of one issuer, found at `discoveryUrl` (discovered at the first token, again after
 * a failure once DISCOVERY_RETRY_MS have passed), for `audience`. `expectedIssuer`, when given,
 * must be the one discovery names (OAUTH_ISSUER), as OpenID Connect Discovery §4.3 requires.
 */
export function tokenChecker({ discoveryUrl, audience, expectedIssuer, keysCooldownMs = KEYS_COOLDOWN_MS }: { discoveryUrl: string; audience: string; expectedIssuer?: string | undefined; keysCooldownMs?: number }): TokenChecker {
  let discovered: Promise<Discovered> | undefined;
  let failedAt = -Infinity;
  const issuer = (): Promise<Discovered> => {
    if (discovered === undefined) {
      if (Date.now() - failedAt < DISCOVERY_RETRY_MS) return Promise.reject(new Error('discovery failed moments ago'));
      discovered = discover(discoveryUrl, keysCooldownMs).then((found) => {
        if (expectedIssuer !== undefined && found.issuer !== expectedIssuer) throw new Error(`discovery at ${discoveryUrl} names issuer ${found.issuer}, not ${expectedIssuer}`);
        return found;
      });
      discovered.catch(() => {
        discovered = undefined;
        failedAt = Date.now();
      });
    }
    return discovered;
  };
  // In insertion order: the first is the oldest, the first to go when the map is full.
  const kept = new Map<string, { verdict: Valid; until: number }>();
  const verify = async (token: string): Promise<TokenVerdict> => {
    let found: Discovered;
    try {
      found = await issuer();
    } catch {
      return 'unavailable';
    }
    try {
      const { payload } = await jwtVerify(token, found.keys, { issuer: found.issuer, audience, algorithms: ALGORITHMS, clockTolerance: CLOCK_SKEW_S, requiredClaims: ['exp'] });
      const subject = typeof payload.sub === 'string' ? payload.sub : (payload as { client_id?: unknown }).client_id;
      if (typeof subject !== 'string') return 'invalid';
      const verdict: Valid = { caller: `${found.issuer}#${subject}`, scopes: scopesOf(payload) };
      if (kept.size >= KEPT_TOKENS) kept.delete(kept.keys().next().value as string);
      kept.set(token, { verdict, until: Math.min((payload.exp as number) * 1000, Date.now() + KEPT_TOKEN_MS) });
      return verdict;
    } catch (error) {
      return error instanceof errors.JOSEError && REFUSED.has(error.code) ? 'invalid' : 'unavailable';
    }
  };
  return {
    check(token) {
      const known = kept.get(token);
      if (known !== undefined) {
        if (known.until > Date.now()) return known.verdict;
        kept.delete(token);
      }
      return verify(token);
    },
  };
}
