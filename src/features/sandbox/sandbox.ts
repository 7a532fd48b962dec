/**
 * The sandbox's stage (scripts/sandbox.ts puts it first in the list of stages; src/main.ts never
 * does): the `X-Sandbox: true` marker on every answer, and `POST /__sandbox/reset`, outside the
 * API's base path, which puts the seed animals back. Nothing here is on the production server's
 * request path.
 */
import type { Logger } from '../../shared/logger.js';
import { refuse } from '../../errors/refusal.js';
import { answerJson, setAhead } from '../../http/respond.js';
import { ANSWERED, type Stage } from '../../pipeline/stage.js';

export const SANDBOX_HEADER = 'X-Sandbox';
export const SANDBOX_RESET_PATH = '/__sandbox/reset';

export interface SandboxRoutes {
  /** Restores the seeds; resolves to the number of animals stored. */
  reset(): Promise<number>;
  logger: Logger;
}

export function sandboxStage(routes: SandboxRoutes): Stage {
  return {
    name: 'sandbox',
    run(exchange) {
      setAhead(exchange, SANDBOX_HEADER, 'true');
      const { req } = exchange;
      if ((req.url ?? '/').split('?', 1)[0] !== SANDBOX_RESET_PATH) return undefined;
      req.resume();
      // Callable from a page on any origin (a test's setup): a simple POST, or one with a preflight.
      const cors = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': 'X-Sandbox, X-Request-Id' };
      if (req.method === 'OPTIONS') {
        answerJson(exchange, 204, undefined, { ...cors, 'Access-Control-Allow-Methods': 'POST', 'Access-Control-Allow-Headers': 'Authorization, Content-Type, X-Request-Id', 'Access-Control-Max-Age': '7200' });
        return ANSWERED;
      }
      if (req.method !== 'POST') {
        answerJson(exchange, 405, refuse('method_not_allowed', 'notOnPath', req.method ?? '', SANDBOX_RESET_PATH, 'POST').body(), { ...cors, Allow: 'POST, OPTIONS' });
        return ANSWERED;
      }
      return routes.reset().then(
        (pets) => {
          routes.logger.info({ pets }, 'sandbox reset to its seeds');
          answerJson(exchange, 200, { reset: true, pets }, cors);
          return ANSWERED;
        },
        (error: unknown) => {
          routes.logger.error({ reqId: exchange.requestId, err: error }, 'sandbox reset failed');
          answerJson(exchange, 500, refuse('internal_error', 'sandboxReset', exchange.requestId).body(), cors);
          return ANSWERED;
        },
      );
    },
  };
}

/** The list of stages with the sandbox's first, for createApp's arrangeStages. */
export function withSandbox(routes: SandboxRoutes): (stages: Stage[]) => Stage[] {
  return (stages) => [sandboxStage(routes), ...stages];
}
