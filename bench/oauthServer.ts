/**
 * The server, run by the benchmark as a child (`node --import tsx`), on the bundled contract with
 * an `oauth2` scheme added beside the API key on every operation: the same request path, handlers
 * and store, taking a JWT access token (checked against OAUTH_ISSUER's keys, ../src/auth/tokens.ts)
 * or a key. The bench calls getPet both ways on this one server, so their ratio says what a token
 * costs against a key and nothing else.
 */
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { createLogger } from '../src/shared/logger.js';
import { loadBundledSpec, type OpenApiDocument } from '../src/shared/spec.js';

export const BENCH_SCHEME = 'benchOAuth';

function withOAuthAlternative(): OpenApiDocument {
  const document = structuredClone(loadBundledSpec());
  const schemes = ((document.components ??= {}).securitySchemes ??= {});
  schemes[BENCH_SCHEME] = { type: 'oauth2', flows: { clientCredentials: { tokenUrl: `${process.env.OAUTH_ISSUER ?? ''}/token`, scopes: {} } } };
  const alternative = (security: typeof document.security) => (security === undefined || security.length === 0 ? security : [...security, { [BENCH_SCHEME]: [] }]);
  document.security = alternative(document.security);
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item ?? {})) {
      if (typeof operation === 'object' && operation !== null && 'responses' in operation && operation.security !== undefined) operation.security = alternative(operation.security);
    }
  }
  return document;
}

const config = loadConfig();
await startServer({ config, logger: createLogger(config.logLevel), document: withOAuthAlternative(), bootstrapKey: false });

const parent = Number(process.env.BENCH_PARENT);
if (parent) setInterval(() => process.ppid !== parent && process.exit(0), 1000).unref();
