/**
 * Who is calling: the operation's security requirements (its own `security`, else the
 * document's, as the router hands them down; `security: []` is public), each an alternative whose
 * schemes must all hold a valid key of our key store. Every supported scheme carries an API key:
 * `http` + `bearer` in `Authorization: Bearer <key>` (RFC 6750, the scheme name case-insensitive),
 * or `apiKey` in a named header; `npm run lint` refuses any other, so a spec that lints starts.
 * A request none of them admits is refused here: a 401 with its challenge, or a 503 when keys
 * cannot be checked.
 */
import type { KeyVerdict } from '../auth/keyCache.js';
import { refuse } from '../errors/refusal.js';
import type { OpenApiDocument } from '../shared/spec.js';
import type { Stage } from '../http/stage.js';

export interface KeyChecker {
  check(token: string | undefined): KeyVerdict;
}

type Scheme = { type?: string; scheme?: string; in?: string; name?: string };
type Headers = Readonly<Record<string, string | string[] | undefined>>;

const CHALLENGE = 'Bearer realm="animal-store"';

/** The token of an `Authorization: Bearer <token>` header, or undefined when it is not of that form (RFC 6750: no credential). */
function bearerToken(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^bearer +([^ ]+) *$/i.exec(header);
  return match?.[1];
}

/** How a scheme's credential is read from the request headers; throws for an unsupported scheme. */
function credentialReader(name: string, scheme: Scheme): (headers: Headers) => string | undefined {
  if (scheme.type === 'http' && scheme.scheme?.toLowerCase() === 'bearer') return (headers) => bearerToken(headers.authorization);
  if (scheme.type === 'apiKey' && scheme.in === 'header' && scheme.name) {
    const header = scheme.name.toLowerCase();
    return (headers) => {
      const value = headers[header];
      return typeof value === 'string' ? value : undefined;
    };
  }
  throw new Error(`security scheme ${name}: only http bearer and apiKey in a header are supported (npm run lint says so too)`);
}

export function authenticateStage(document: OpenApiDocument, keys: KeyChecker): Stage {
  const readers = new Map<string, (headers: Headers) => string | undefined>();
  for (const [name, scheme] of Object.entries(document.components?.securitySchemes ?? {})) readers.set(name, credentialReader(name, scheme as Scheme));
  return {
    name: 'authenticate',
    run(exchange, next) {
      const requirements = exchange.operation?.security ?? [];
      if (requirements.length === 0) return next(exchange);
      const { headers } = exchange.req;
      let sent = false;
      let unavailable = false;
      for (const requirement of requirements) {
        let caller: string | undefined;
        let satisfied = true;
        for (const name in requirement) {
          const token = readers.get(name)?.(headers);
          const verdict: KeyVerdict | 'missing' = token === undefined ? 'missing' : keys.check(token);
          if (typeof verdict === 'object') caller ??= verdict.caller;
          else {
            satisfied = false;
            if (verdict === 'unavailable') unavailable = true;
            else if (verdict === 'invalid') sent = true;
          }
        }
        if (satisfied) {
          exchange.caller = caller;
          return next(exchange);
        }
      }
      // Fail closed, but a 503 when keys could not be checked says it is temporary; the challenge
      // names the error only when a credential was sent (RFC 6750 §3).
      throw unavailable ? refuse('service_unavailable', 'keysUnchecked') : refuse('unauthorized', 'noValidKey', sent ? `${CHALLENGE}, error="invalid_token"` : CHALLENGE);
    },
  };
}
