/**
 * The sandbox's stage (scripts/sandbox.ts puts it right after the exit; src/main.ts never
 * does): the `X-Sandbox: true` marker on every answer, and, outside the API's base path,
 * `POST /__sandbox/reset`, which puts the seed animals back, and `POST /__sandbox/webhooks?url=…`
 * / `DELETE /__sandbox/webhooks/{id}`, which subscribe a receiver of the developer's to the
 * sandbox's events and remove it (`npm run webhooks -- listen --sandbox`: the sandbox's store is a
 * temp file no command can open). Its refusals (a 405, a bad URL's 400, a failed reset's 500)
 * leave through the exit like any other. Nothing here is on the production server's request path.
 */
import type { Logger } from '../../shared/logger.js';
import { refuse } from '../../errors/refusal.js';
import { answerJson, setAhead } from '../../http/respond.js';
import type { Done, Stage } from '../../http/stage.js';
import type { Exchange } from '../../http/exchange.js';

export const SANDBOX_HEADER = 'X-Sandbox';
export const SANDBOX_RESET_PATH = '/__sandbox/reset';
export const SANDBOX_WEBHOOKS_PATH = '/__sandbox/webhooks';

export interface SandboxRoutes {
  /** Restores the seeds; resolves to the number of animals stored. */
  reset(): Promise<number>;
  /** Subscribes `url` to `events` (every event when undefined): its id and secret, or a refusal's reason. */
  subscribe(url: string, events: string[] | undefined): Promise<{ id: number; secret: string } | { refused: string }>;
  /** Removes a subscription; false when there is none with that id. */
  unsubscribe(id: number): Promise<boolean>;
  logger: Logger;
}

export function sandboxStage(routes: SandboxRoutes): Stage {
  return {
    name: 'sandbox',
    run(exchange, next) {
      setAhead(exchange, SANDBOX_HEADER, 'true');
      const { req } = exchange;
      const target = new URL(req.url ?? '/', 'http://sandbox');
      if (target.pathname === SANDBOX_WEBHOOKS_PATH || target.pathname.startsWith(`${SANDBOX_WEBHOOKS_PATH}/`)) return webhooksRoute(exchange, target, routes);
      if (target.pathname !== SANDBOX_RESET_PATH) return next(exchange);
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

/** Subscribes (POST with `url` and optional `events` in the query) or removes (DELETE …/{id}) a receiver of the sandbox's events. */
function webhooksRoute(exchange: Exchange, target: URL, routes: SandboxRoutes): Done {
  const { req } = exchange;
  req.resume();
  const id = target.pathname.slice(SANDBOX_WEBHOOKS_PATH.length + 1);
  if (id === '') {
    if (req.method !== 'POST') throw refuse('method_not_allowed', 'notOnPath', req.method ?? '', SANDBOX_WEBHOOKS_PATH, 'POST');
    const url = target.searchParams.get('url');
    if (url === null) throw refuse('validation_failed', 'sandboxEndpoint', 'the query names no url');
    const events = target.searchParams.get('events')?.split(',').filter((name) => name !== '');
    return routes.subscribe(url, events).then((outcome) => {
      if ('refused' in outcome) throw refuse('validation_failed', 'sandboxEndpoint', outcome.refused);
      routes.logger.info({ endpoint: outcome.id }, 'sandbox: a receiver subscribed to its events');
      answerJson(exchange, 201, outcome);
    });
  }
  const path = `${SANDBOX_WEBHOOKS_PATH}/${id}`;
  if (req.method !== 'DELETE') throw refuse('method_not_allowed', 'notOnPath', req.method ?? '', path, 'DELETE');
  if (!/^\d{1,15}$/.test(id)) throw refuse('not_found', 'noSuchPath', path);
  return routes.unsubscribe(Number(id)).then((removed) => {
    if (!removed) throw refuse('not_found', 'noSuchPath', path);
    answerJson(exchange, 204, undefined);
  });
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
