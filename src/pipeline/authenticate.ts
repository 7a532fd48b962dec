/**
 * Who is calling: the operation's security requirements (its own `security`, else the
 * document's, as the router hands them down; `security: []` is public), each an alternative whose
 * schemes must all hold a valid key of our key store. Each scheme carries an API key where the
 * spec says (src/auth/schemes.ts: bearer, basic, a header, a cookie); a spec with another stops the
 * start, and `npm run lint` refuses it first. A request none of the alternatives admits is refused
 * here: a 401 with a challenge per HTTP scheme it accepts, or a 503 when keys cannot be checked.
 */
import type { KeyVerdict } from '../auth/keyCache.js';
import { challengeFor, schemeReader, type SchemeReader, type SecurityScheme } from '../auth/schemes.js';
import { refuse } from '../errors/refusal.js';
import type { OpenApiDocument } from '../shared/spec.js';
import type { Stage } from '../http/stage.js';

export interface KeyChecker {
  check(token: string | undefined): KeyVerdict;
}

const NO_COOKIES: Readonly<Record<string, string | undefined>> = {};

export function authenticateStage(document: OpenApiDocument, keys: KeyChecker): Stage {
  const readers = new Map<string, SchemeReader>();
  for (const [name, scheme] of Object.entries(document.components?.securitySchemes ?? {})) readers.set(name, schemeReader(name, scheme as SecurityScheme));
  return {
    name: 'authenticate',
    run(exchange, next) {
      const requirements = exchange.operation?.security ?? [];
      if (requirements.length === 0) return next(exchange);
      const { headers } = exchange.req;
      const cookies = exchange.request?.cookies ?? NO_COOKIES;
      let sent = false;
      let unavailable = false;
      for (const requirement of requirements) {
        let caller: string | undefined;
        let satisfied = true;
        for (const name in requirement) {
          const token = readers.get(name)?.read(headers, cookies);
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
      // Fail closed, but a 503 when keys could not be checked says it is temporary.
      if (unavailable) throw refuse('service_unavailable', 'keysUnchecked');
      const challenges = requirements.flatMap((requirement) => Object.keys(requirement).map((name) => readers.get(name)?.challenge));
      throw refuse('unauthorized', 'noValidKey', challengeFor(challenges, sent));
    },
  };
}
