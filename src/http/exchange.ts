/**
 * One request and its response, from the moment node:http hands them over until the answer is
 * sent: the one object every stage of the request path passes on (src/pipeline/requestPath.ts),
 * the responder and Express's final callback included, instead of each taking the response, the
 * request id, the operation and the handler's result as arguments of its own. It is made once per
 * request, by beginExchange.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Operation, ParsedRequest } from 'openapi-backend';
import { API_KEY_PREFIX, redactApiKeys } from '../domain/apiKey.js';
import type { DeclaredBody } from './bodies/declared.js';
import type { Logger } from '../shared/logger.js';

/**
 * Where the request body stands, so the answer knows whether something is left to drain:
 * - `none`: the request has no body (no Content-Length or a zero one, no Transfer-Encoding);
 * - `unread`: it has one that nobody has read (yet);
 * - `read`: the body reader has taken it to its end;
 * - `draining`: it was refused and is being read and dropped (./bodies/unread.ts, answerAfterBody).
 */
export type BodyState = 'none' | 'unread' | 'read' | 'draining';

export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The client's `X-Request-Id` when it is a sane token that is not an API key, else a fresh UUID. */
  readonly requestId: string;
  /** Where the request body stands: whether the answer must still drain it. */
  body: BodyState;
  /** Who is calling, once the key check has passed (../auth/keyCache.ts, KeyVerdict); undefined before, or on a public operation. */
  caller: string | undefined;
  /**
   * Headers a step before the answer decided every answer of this exchange carries (CORS, the
   * rate limit's, a deprecated operation's): ./respond.ts, setAhead. Undefined while there are none.
   */
  ahead: Record<string, string> | undefined;
  /**
   * The operation the router matched (src/pipeline/match.ts): every answer from then on is checked
   * against its responses. Undefined outside the API and for an unknown path or method.
   */
  operation: Operation | undefined;
  /** The request as the router parsed it for that operation; validation converts it in place. */
  request: ParsedRequest | undefined;
  /** The body as the operation declares it for the request's media type, once read (./bodies/read.ts). */
  declaredBody: DeclaredBody | undefined;
  /** The request body's own media type, once read (`image/png` where `image/*` is declared). */
  mediaType: string | undefined;
  /** The handler's result (or exactly-once's replay of it), which the answer writes. */
  result: AnyHandlerResult | undefined;
}

/** What any handler answers, untyped: src/domain/contract.ts's HandlerResult<O> is the same per operation. */
export interface AnyHandlerResult {
  status: number;
  body: unknown;
  headers?: Readonly<Record<string, string>> | undefined;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Whether the request carries a body at all (framing headers, not bytes). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Makes the exchange for a request that just arrived: picks its request id (its answer carries
 * it and the security headers: ./respond.ts), notes whether it has a body, and logs one line
 * when the response has been sent, with any key-shaped part of the path masked.
 */
export function beginExchange(req: IncomingMessage, res: ServerResponse, logger: Logger): Exchange {
  // Checked once here, so a silenced log costs neither a clock read nor a listener per request.
  const logged = logger.isLevelEnabled('info');
  const started = logged ? process.hrtime.bigint() : 0n;
  const incoming = req.headers['x-request-id'];
  const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) && !incoming.includes(API_KEY_PREFIX) ? incoming : randomUUID();
  const exchange: Exchange = {
    req,
    res,
    requestId,
    body: hasBody(req) ? 'unread' : 'none',
    caller: undefined,
    ahead: undefined,
    operation: undefined,
    request: undefined,
    declaredBody: undefined,
    mediaType: undefined,
    result: undefined,
  };
  if (logged) {
    // 'finish' is emitted once per response: `on` spares the wrapper objects `once` makes per call.
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const url = req.url ?? '';
      const query = url.indexOf('?');
      logger.info({ reqId: requestId, method: req.method, path: redactApiKeys(query === -1 ? url : url.slice(0, query)), status: res.statusCode, durationMs: Math.round(durationMs * 100) / 100 }, 'request');
    });
  }
  return exchange;
}
