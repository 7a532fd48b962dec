/**
 * One openapi-backend security handler per scheme in `components.securitySchemes`; openapi-backend
 * evaluates each operation's requirements with them (the global default, an operation's own,
 * `security: []`, alternatives). Every supported scheme carries an API key of our key store:
 * `http` + `bearer` in `Authorization: Bearer <key>` (RFC 6750), or `apiKey` in a named header.
 * `npm run lint` refuses any other scheme, so a spec that lints starts.
 */
import type { Context, OpenAPIBackend } from 'openapi-backend';
import type { KeyVerdict } from '../auth/keyCache.js';
import type { OpenApiDocument } from '../spec.js';
import { refuse, type Refusal } from '../errors/refusal.js';

export interface KeyChecker {
  check(token: string | undefined): KeyVerdict;
}

/** What a scheme's handler reports: openapi-backend treats a truthy `error` as failed auth. */
interface SchemeResult {
  error?: 'missing' | 'invalid' | 'unavailable';
  /** For a valid key: who is calling (../auth/keyCache.ts, KeyVerdict). */
  caller?: string;
}

type Scheme = { type?: string; scheme?: string; in?: string; name?: string };

const CHALLENGE = 'Bearer realm="animal-store"';

/**
 * The token of an `Authorization: Bearer <token>` header (RFC 6750; the scheme name is
 * case-insensitive), or undefined when the header is missing or not of that form.
 */
function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^bearer +([^ ]+) *$/i.exec(header);
  return match?.[1];
}

/** How a scheme's credential is read from the request headers; throws for an unsupported scheme. */
function credentialReader(name: string, scheme: Scheme): (headers: Record<string, unknown>) => string | undefined {
  if (scheme.type === 'http' && scheme.scheme?.toLowerCase() === 'bearer') {
    // A header that is not `Bearer <token>` counts as no credential, as RFC 6750 has it.
    return (headers) => (typeof headers.authorization === 'string' ? bearerToken(headers.authorization) : undefined);
  }
  if (scheme.type === 'apiKey' && scheme.in === 'header' && scheme.name) {
    const header = scheme.name.toLowerCase();
    return (headers) => {
      const value = headers[header];
      return typeof value === 'string' ? value : undefined;
    };
  }
  throw new Error(`security scheme ${name}: only http bearer and apiKey in a header are supported (npm run lint says so too)`);
}

export function registerSecurityHandlers(backend: OpenAPIBackend, document: OpenApiDocument, keys: KeyChecker): void {
  for (const [name, scheme] of Object.entries(document.components?.securitySchemes ?? {})) {
    const read = credentialReader(name, scheme as Scheme);
    backend.registerSecurityHandler(name, (context: Context): SchemeResult => {
      const token = read(context.request.headers as Record<string, unknown>);
      if (token === undefined) return { error: 'missing' };
      const verdict = keys.check(token);
      return typeof verdict === 'object' ? { caller: verdict.caller } : { error: verdict };
    });
  }
}

/** The caller a satisfied scheme reported, or undefined when none did (a public operation). */
export function callerOf(context: Context): string | undefined {
  for (const result of Object.values((context.security ?? {}) as Record<string, SchemeResult | boolean | undefined>)) {
    if (typeof result === 'object' && result !== null && result.caller !== undefined) return result.caller;
  }
  return undefined;
}

/**
 * The Refusal when no alternative of the operation's security was satisfied: 503 when keys could
 * not be checked (fail closed, but say it is temporary), else 401 with a Bearer challenge that
 * adds `error="invalid_token"` when a credential was sent (RFC 6750).
 */
export function unauthorized(context: Context): Refusal {
  const results = Object.values((context.security ?? {}) as Record<string, SchemeResult | boolean | undefined>).filter(
    (r): r is SchemeResult => typeof r === 'object' && r !== null,
  );
  if (results.some((r) => r.error === 'unavailable')) {
    return refuse('service_unavailable', 'keysUnchecked');
  }
  const sent = results.some((r) => r.error === 'invalid');
  return refuse('unauthorized', 'noValidKey', sent ? `${CHALLENGE}, error="invalid_token"` : CHALLENGE);
}
