/**
 * One request and its response, from the moment node:http hands them over until the answer is
 * sent: the one object every step passes on (the lane split in ./app.ts, openapi-backend's
 * handlers in ./api.ts, the body reader, the responder, Express's final callback), instead of
 * each taking the response, the request id and the operation as arguments of its own. It is made
 * once per request, by beginExchange; in the API lane it is openapi-backend's handler argument.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_KEY_PREFIX, redactApiKeys } from '../auth/apiKey.js';
import type { Logger } from '../logger.js';
import { SECURITY_HEADERS } from './securityHeaders.js';

/**
 * Where the request body stands, so the answer knows whether something is left to drain:
 * - `none`: the request has no body (no Content-Length or a zero one, no Transfer-Encoding);
 * - `unread`: it has one that nobody has read (yet);
 * - `read`: the body reader has taken it to its end;
 * - `draining`: it was refused and is being read and dropped (./body.ts, answerAfterBody).
 */
export type BodyState = 'none' | 'unread' | 'read' | 'draining';

export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The client's `X-Request-Id` when it is a sane token that is not an API key, else a fresh UUID. */
  readonly requestId: string;
  /**
   * The operation the answer belongs to, once openapi-backend has routed the request and the key
   * check has passed: the answer is checked against its responses and gets its deprecation
   * headers. Undefined for anything else (unknown paths, a failed key check, outside the API).
   */
  operationId: string | undefined;
  /** Where the request body stands: whether the answer must still drain it. */
  body: BodyState;
  /** Who is calling, once the key check has passed (../auth/keyCache.ts, KeyVerdict); undefined before, or on a public operation. */
  caller: string | undefined;
  /**
   * Headers a step before the answer decided every answer of this exchange carries (CORS, the
   * rate limit's): setAhead. Undefined while there are none.
   */
  ahead: Record<string, string> | undefined;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
/** The security headers but Cache-Control, flat (name, value, …): an answer's Cache-Control is its own (./respond.ts). */
const SECURITY_HEADER_LIST: readonly string[] = Object.entries(SECURITY_HEADERS)
  .filter(([name]) => name !== 'Cache-Control')
  .flat();
const NO_STORE = SECURITY_HEADERS['Cache-Control'] as string;

/**
 * The headers every answer of the exchange starts with, as a flat list (name, value, …) for one
 * `writeHead`: the security headers, the request id, `cacheControl` (`no-store` unless the answer
 * says otherwise) and those set ahead (setAhead). None is set on the response before the answer:
 * node:http writes a flat list passed to `writeHead` as it is, but merges it header by header into
 * any set before; res.setHeader per header, or an object passed to writeHead, measured slower
 * under load (docs/performance.md).
 */
export function exchangeHeaders(exchange: Exchange, cacheControl: string = NO_STORE): string[] {
  const list = [...SECURITY_HEADER_LIST, 'X-Request-Id', exchange.requestId, 'Cache-Control', cacheControl];
  const { ahead } = exchange;
  if (ahead !== undefined) for (const name in ahead) list.push(name, ahead[name] as string);
  return list;
}

/** Where in a list each header's value stands, by lower-case name. */
export function valuePositions(list: readonly string[]): Map<string, number> {
  const positions = new Map<string, number>();
  for (let i = 0; i < list.length; i += 2) positions.set((list[i] as string).toLowerCase(), i + 1);
  return positions;
}

/** valuePositions of exchangeHeaders' list when nothing was set ahead: the same for every exchange. */
export const EXCHANGE_HEADER_VALUE_AT: ReadonlyMap<string, number> = valuePositions([...SECURITY_HEADER_LIST, 'X-Request-Id', '', 'Cache-Control', '']);

/** Makes every answer of the exchange carry a header (see Exchange.ahead); a later answer's own header of that name wins. */
export function setAhead(exchange: Exchange, name: string, value: string): void {
  (exchange.ahead ??= {})[name] = value;
}

/** For a lane that writes its answer itself (Express, ./web.ts): the exchange's headers set on the response ahead of it. */
export function setExchangeHeaders(exchange: Exchange): void {
  const list = exchangeHeaders(exchange);
  for (let i = 0; i < list.length; i += 2) exchange.res.setHeader(list[i] as string, list[i + 1] as string);
}

/** Whether the request carries a body at all (framing headers, not bytes). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Makes the exchange for a request that just arrived: picks its request id (its answer carries
 * it and the security headers: exchangeHeaders), and logs one line when the response has been
 * sent, with any key-shaped part of the path masked.
 */
export function beginExchange(req: IncomingMessage, res: ServerResponse, logger: Logger): Exchange {
  // Checked once here, so a silenced log costs neither a clock read nor a listener per request.
  const logged = logger.isLevelEnabled('info');
  const started = logged ? process.hrtime.bigint() : 0n;
  const incoming = req.headers['x-request-id'];
  const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) && !incoming.includes(API_KEY_PREFIX) ? incoming : randomUUID();
  const exchange: Exchange = { req, res, requestId, operationId: undefined, body: hasBody(req) ? 'unread' : 'none', caller: undefined, ahead: undefined };
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
