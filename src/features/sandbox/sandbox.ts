/**
 * The sandbox's stage (scripts/sandbox.ts puts it right after the exit; src/main.ts never
 * does): the `X-Sandbox: true` marker on every answer, and `POST /__sandbox/reset`, outside the
 * API's base path, which puts the seed animals back. Its refusals (a 405, a failed reset's 500)
 * leave through the exit like any other. Nothing here is on the production server's request path.
 */
import type { Logger } from '../../shared/logger.js';
import { refuse } from '../../errors/refusal.js';
import { answerJson, setAhead } from '../../http/respond.js';
import type { Stage } from '../../http/stage.js';

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
    run(exchange, next) {
      setAhead(exchange, SANDBOX_HEADER, 'true');
      const { req } = exchange;
      if ((req.url ?? '/').split('?', 1)[0] !== SANDBOX_RESET_PATH) return next(exchange);
      req.resume();
      // Callable from a page on any origin (a test's setup): a simple POST, or one with a preflight.
      for (const name in CORS) setAhead(exchange, name, CORS[name] as string);
      if (req.method === 'OPTIONS') {
        answerJson(exchange, 204, undefined, { 'Access-Control-Allow-Methods': 'POST', 'Access-Control-Allow-Headers': 'Authorization, Content-Type, X-Request-Id', 'Access-Control-Max-Age': '7200' });
        return undefined;
      }
      if (req.method !== 'POST') throw refuse('method_not_allowed', 'notOnPath', req.method ?? '', SANDBOX_RESET_PATH, 'POST, OPTIONS');
      return routes.reset().then(
        (pets) => {
          routes.logger.info({ pets }, 'sandbox reset to its seeds');
          answerJson(exchange, 200, { reset: true, pets });
        },
        (error: unknown) => {
          routes.logger.error({ reqId: exchange.requestId, err: error }, 'sandbox reset failed');
          throw refuse('internal_error', 'sandboxReset', exchange.requestId);
        },
      );
    },
  };
}

/** Callable from a page on any origin (a test's setup): a simple POST, or one with a preflight. */
const CORS: Readonly<Record<string, string>> = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': 'X-Sandbox, X-Request-Id' };

/** The list of stages with the sandbox's right after the exit (so its refusals leave through it), for createApp's arrangeStages. */
export function withSandbox(routes: SandboxRoutes): (stages: Stage[]) => Stage[] {
  return (stages) => {
    const exit = stages.findIndex((stage) => stage.name === 'exit');
    return [...stages.slice(0, exit + 1), sandboxStage(routes), ...stages.slice(exit + 1)];
  };
}
