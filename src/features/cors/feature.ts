/**
 * CORS, with CORS_ORIGINS only (./config.ts; ./cors.ts says what the browser is told and why): a
 * request with an Origin is seen first, on every lane; a preflight under the API is answered here.
 */
import type { Feature } from '../feature.js';
import { readCorsOrigins } from './config.js';
import { createCors } from './cors.js';

export const cors: Feature = {
  name: 'cors',
  configure(env) {
    const origins = readCorsOrigins(env);
    if (origins === undefined) return undefined;
    return (host) => {
      const allowing = createCors({ origins, backend: host.backend, serves: host.serves, allowedMethods: host.allowedMethods });
      return {
        stages: [
          {
            before: 'probes',
            stage: {
              name: 'cors',
              run(exchange, next) {
                const origin = exchange.req.headers.origin;
                return origin !== undefined && allowing.handle(exchange, origin) ? undefined : next(exchange);
              },
            },
          },
        ],
        headersFor: (origin) => allowing.headersFor(origin),
      };
    };
  },
};
