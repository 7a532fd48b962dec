/**
 * The sandbox's additions to the request listener (scripts/sandbox.ts wraps the server's listener
 * with this; src/main.ts never does): the `X-Sandbox: true` marker on every response, and
 * `POST /__sandbox/reset`, outside the API's base path, which puts the seed animals back. Nothing
 * here is on the production server's request path.
 */
import type { RequestListener } from 'node:http';
import type { Logger } from '../../logger.js';
import { beginExchange } from '../../http/exchange.js';
import { refuse } from '../../errors/refusal.js';
import { answerJson } from '../../http/respond.js';

export const SANDBOX_HEADER = 'X-Sandbox';
export const SANDBOX_RESET_PATH = '/__sandbox/reset';

export interface SandboxRoutes {
  /** Restores the seeds; resolves to the number of animals stored. */
  reset(): Promise<number>;
  logger: Logger;
}

export function withSandbox(inner: RequestListener, routes: SandboxRoutes): RequestListener {
  return (req, res) => {
    res.setHeader(SANDBOX_HEADER, 'true');
    const url = req.url ?? '/';
    const path = url.split('?', 1)[0];
    if (path !== SANDBOX_RESET_PATH) {
      inner(req, res);
      return;
    }
    const exchange = beginExchange(req, res, routes.logger);
    req.resume();
    // Callable from a page on any origin (a test's setup): a simple POST, or one with a preflight.
    const cors = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': 'X-Sandbox, X-Request-Id' };
    if (req.method === 'OPTIONS') {
      answerJson(exchange, 204, undefined, { ...cors, 'Access-Control-Allow-Methods': 'POST', 'Access-Control-Allow-Headers': 'Authorization, Content-Type, X-Request-Id', 'Access-Control-Max-Age': '7200' });
      return;
    }
    if (req.method !== 'POST') {
      answerJson(exchange, 405, refuse('method_not_allowed', 'notOnPath', req.method ?? '', SANDBOX_RESET_PATH, 'POST').body(), { ...cors, Allow: 'POST, OPTIONS' });
      return;
    }
    routes.reset().then(
      (pets) => {
        routes.logger.info({ pets }, 'sandbox reset to its seeds');
        answerJson(exchange, 200, { reset: true, pets }, cors);
      },
      (error: unknown) => {
        routes.logger.error({ reqId: exchange.requestId, err: error }, 'sandbox reset failed');
        answerJson(exchange, 500, refuse('internal_error', 'sandboxReset', exchange.requestId).body(), cors);
      },
    );
  };
}
