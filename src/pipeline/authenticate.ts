/**
 * Who is calling: the operation's security requirements (its own `security`, else the
 * document's, as the router hands them down; `security: []` is public), each an alternative whose
 * schemes must all hold a valid credential with the scopes it lists. A scheme carries a key of our
 * key store or an issuer's access token (src/auth/schemes.ts: bearer, basic, a header, a cookie;
 * oauth2 and openIdConnect, src/auth/tokens.ts); a spec with another stops the start, and
 * `npm run lint` refuses it first. A key holds the scopes it was made with (every scope, made
 * without: `npm run keys`). A request no alternative admits is
 * refused here: a 403 naming the scopes when its credentials are valid but lack some, a 503 when a
 * credential could not be checked, else a 401 with a challenge per HTTP scheme it accepts.
 * Checking a key awaits nothing; only an access token's signature is checked asynchronously.
 */
import type { KeyVerdict } from '../auth/keyCache.js';
import { challengeFor, schemeReader, REALM, type SchemeReader, type SecurityScheme } from '../auth/schemes.js';
import { tokenChecker, type OAuthSettings, type TokenChecker, type TokenVerdict } from '../auth/tokens.js';
import { refuse } from '../errors/refusal.js';
import type { Exchange } from '../http/exchange.js';
import type { Next, Stage } from '../http/stage.js';
import { ConfigError } from '../shared/env.js';
import type { OpenApiDocument } from '../shared/spec.js';

export interface KeyChecker {
  check(token: string | undefined): KeyVerdict;
}

type Verdict = KeyVerdict | TokenVerdict | 'missing';
type Requirement = Readonly<Record<string, readonly string[]>>;
type Scheme = SchemeReader & { tokens?: TokenChecker };

const NO_COOKIES: Readonly<Record<string, string | undefined>> = {};

/** The checker of a token scheme's issuer; a scheme without its configuration stops the start, naming the variable. */
function issuerOf(name: string, scheme: SecurityScheme, oauth: OAuthSettings): TokenChecker {
  if (oauth.audience === undefined) throw new ConfigError(`OAUTH_AUDIENCE is not set: security scheme ${name} (${scheme.type ?? ''}) takes access tokens, which must be meant for this API; set it to their audience (aud)`);
  if (scheme.type === 'openIdConnect') return tokenChecker({ discoveryUrl: scheme.openIdConnectUrl ?? '', audience: oauth.audience });
  if (oauth.issuer === undefined) throw new ConfigError(`OAUTH_ISSUER is not set: security scheme ${name} (oauth2) takes access tokens of an issuer; set it to the issuer's URL (its /.well-known/openid-configuration is read)`);
  return tokenChecker({ discoveryUrl: `${oauth.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, audience: oauth.audience, expectedIssuer: oauth.issuer });
}

/** The verdict: the first alternative that holds passes; else why none did. */
function decide(requirements: readonly Requirement[], verdicts: ReadonlyMap<string, Verdict>, schemes: ReadonlyMap<string, Scheme>, exchange: Exchange, next: Next): ReturnType<Next> {
  let unavailable = false;
  let sent = false;
  let lacking: readonly string[] | undefined;
  for (const requirement of requirements) {
    let caller: string | undefined;
    let valid = true;
    const missing: string[] = [];
    for (const name in requirement) {
      const verdict = verdicts.get(name) ?? 'missing';
      if (typeof verdict === 'object') {
        caller ??= verdict.caller;
        // A token holds the scopes it names, a key those it was made with (all, made without).
        const held = verdict.scopes;
        if (held !== undefined) for (const scope of requirement[name] ?? []) if (!held.has(scope)) missing.push(scope);
        continue;
      }
      valid = false;
      if (verdict === 'unavailable') unavailable = true;
      else if (verdict === 'invalid') sent = true;
    }
    if (valid && missing.length === 0) {
      exchange.caller = caller;
      return next(exchange);
    }
    if (valid) lacking ??= missing;
  }
  // RFC 6750 §3.1: valid credentials without the scope are a 403 naming the scopes needed.
  if (lacking !== undefined) throw refuse('insufficient_scope', 'missingScopes', `Bearer realm="${REALM}", error="insufficient_scope", scope="${lacking.join(' ')}"`);
  // Fail closed, but a 503 when a credential could not be checked says it is temporary.
  if (unavailable) throw refuse('service_unavailable', 'keysUnchecked');
  const challenges = requirements.flatMap((requirement) => Object.keys(requirement).map((name) => schemes.get(name)?.challenge));
  throw refuse('unauthorized', 'noValidKey', challengeFor(challenges, sent));
}

export function authenticateStage(document: OpenApiDocument, keys: KeyChecker, oauth: OAuthSettings = { issuer: undefined, audience: undefined }): Stage {
  const schemes = new Map<string, Scheme>();
  for (const [name, raw] of Object.entries(document.components?.securitySchemes ?? {})) {
    const scheme = raw as SecurityScheme;
    const reader = schemeReader(name, scheme);
    schemes.set(name, reader.token ? { ...reader, tokens: issuerOf(name, scheme, oauth) } : reader);
  }
  return {
    name: 'authenticate',
    run(exchange, next) {
      const requirements = (exchange.operation?.security ?? []) as readonly Requirement[];
      if (requirements.length === 0) return next(exchange);
      const { headers } = exchange.req;
      const cookies = exchange.request?.cookies ?? NO_COOKIES;
      const verdicts = new Map<string, Verdict>();
      let pending: Array<Promise<void>> | undefined;
      for (const requirement of requirements) {
        for (const name in requirement) {
          if (verdicts.has(name)) continue;
          const scheme = schemes.get(name);
          const credential = scheme?.read(headers, cookies);
          if (credential === undefined || scheme === undefined) verdicts.set(name, 'missing');
          else if (scheme.tokens === undefined) verdicts.set(name, keys.check(credential));
          else {
            const verdict = scheme.tokens.check(credential);
            if (!(verdict instanceof Promise)) verdicts.set(name, verdict);
            else {
              verdicts.set(name, 'unavailable');
              (pending ??= []).push(verdict.then((found) => void verdicts.set(name, found)));
            }
          }
        }
      }
      if (pending === undefined) return decide(requirements, verdicts, schemes, exchange, next);
      return Promise.all(pending).then(() => decide(requirements, verdicts, schemes, exchange, next));
    },
  };
}
