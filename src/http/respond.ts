/**
 * The one way a response leaves the server (but the docs page and the raw contract): every JSON
 * body passed through the contract check before it is written, with the deprecation headers of
 * its operation, and the exchange's own headers (security headers, request id: ./exchange.ts),
 * all in one `writeHead`.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import { JsonText } from '../schemas.js';
import { isDatabaseUnavailable } from '../unavailable.js';
import { answerAfterBody } from './body.js';
import { entityTag, ifNoneMatchMatches, REVALIDATE } from './etag.js';
import { EXCHANGE_HEADER_VALUE_AT, exchangeHeaders, valuePositions, type Exchange } from './exchange.js';
import { Refusal } from './refusal.js';
import type { ResponseChecker } from './responseChecker.js';

/**
 * Writes a JSON body with its length (or none when `body` is undefined) after `headers`, a flat
 * list (name, value, …) that it extends, in one `writeHead`: nothing per request but the
 * serialisation itself. Headers set on the response before stay (node:http merges the list into them).
 */
export function writeJson(res: ServerResponse, status: number, body: unknown, headers: string[] = []): void {
  // A response the spec declares without content (204, say): no body, no media type.
  if (body === undefined) {
    res.writeHead(status, headers).end();
    return;
  }
  const text = body instanceof JsonText ? body.text : JSON.stringify(body);
  headers.push('Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(text)));
  res.writeHead(status, headers).end(text);
}

/**
 * Answers the exchange: its own headers (./exchange.ts; `cacheControl` replaces `no-store`), then
 * `headers`, then the body as writeJson writes it. One of `headers` that names an exchange header
 * (a Cache-Control a contract declares, say) replaces its value, as a later setHeader would: a
 * flat list is written as it is, and would otherwise send the header twice.
 */
export function answerJson(exchange: Exchange, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}, cacheControl?: string): void {
  const list = exchangeHeaders(exchange, cacheControl);
  const valueAt = exchange.ahead === undefined ? EXCHANGE_HEADER_VALUE_AT : valuePositions(list);
  for (const name in headers) {
    const at = valueAt.get(name.toLowerCase());
    if (at === undefined) list.push(name, headers[name] as string);
    else list[at] = headers[name] as string;
  }
  writeJson(exchange.res, status, body, list);
}

/**
 * `{ ...a, ...b }` without the spread: on Node 20, spreading two non-empty objects (getPet's ETag
 * and deprecation headers) measured slower under load than these loops (docs/performance.md).
 */
function merged(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): Record<string, string> {
  const all: Record<string, string> = {};
  for (const name in a) all[name] = a[name] as string;
  for (const name in b) all[name] = b[name] as string;
  return all;
}

/**
 * The headers the contract check judges: every header already on the response (the sandbox's
 * marker, a shutdown's Connection: close), the exchange's own (those set ahead included) and the
 * ones passed in, by lower-case name as node:http keeps them. Only in test and dev: production
 * never copies them.
 */
function checkedHeaders(exchange: Exchange, headers: Record<string, string>, cacheControl: string | undefined): Record<string, string> {
  const { res } = exchange;
  const all: Record<string, string> = {};
  for (const name of res.getHeaderNames()) all[name] = String(res.getHeader(name));
  const own = exchangeHeaders(exchange, cacheControl);
  for (let i = 0; i < own.length; i += 2) all[(own[i] as string).toLowerCase()] = own[i + 1] as string;
  for (const name in headers) all[name.toLowerCase()] = headers[name] as string;
  return all;
}

export interface Responder {
  /** Sends a body through the contract check of the exchange's operation; a violation turns it into a 500. */
  send(exchange: Exchange, status: number, body: unknown, headers?: Readonly<Record<string, string>>): void;
  /**
   * A 200 of an operation whose contract declares an `ETag` on it and a 304 (./api.ts decides):
   * the body is serialised once and tagged from its bytes (./etag.ts), with
   * `Cache-Control: private, no-cache`; when `ifNoneMatch` matches the tag, the answer is a 304
   * with the same headers and no body. Both go through the contract check as `send` does.
   * `headers` are the handler's, in an object of the caller's own: the ETag is added to it.
   */
  sendTagged(exchange: Exchange, body: unknown, headers: Record<string, string>, ifNoneMatch: string | undefined): void;
  /**
   * The one place a refused or failed request is answered: a Refusal (./refusal.ts) as it says;
   * a database that cannot be reached, a 503 to retry; anything else, a logged 500. A body the
   * request still has unread is taken care of first (./body.ts, answerAfterBody).
   */
  sendError(exchange: Exchange, error: unknown): void;
}

export function createResponder(checker: ResponseChecker, deprecations: ReadonlyMap<string, Readonly<Record<string, string>>>, logger: Logger): Responder {
  /** `cacheControl` replaces the exchange's `no-store` (only when the response passes the check). */
  const deliver = (exchange: Exchange, status: number, body: unknown, headers: Readonly<Record<string, string>>, cacheControl?: string): void => {
    const { operationId } = exchange;
    const deprecation = operationId === undefined ? undefined : deprecations.get(operationId);
    const all = deprecation ? merged(headers, deprecation) : headers;
    if (checker.enabled) {
      const request = `${exchange.req.method ?? ''} ${exchange.req.url ?? ''}`;
      const violation = checker.check(operationId, status, body, checkedHeaders(exchange, all, cacheControl), request);
      if (violation) {
        // Checking is on in test and dev only: there the 500 says what the answer would have broken.
        answerJson(exchange, 500, new Refusal(500, 'internal_error', `The server produced a response that breaks its contract: ${violation.problems.join(' | ').slice(0, 1000)}`).body());
        return;
      }
    }
    answerJson(exchange, status, body, all, cacheControl);
  };
  const send: Responder['send'] = (exchange, status, body, headers = {}) => deliver(exchange, status, body, headers);
  const sendTagged: Responder['sendTagged'] = (exchange, body, headers, ifNoneMatch) => {
    const text = body instanceof JsonText ? body.text : JSON.stringify(body);
    const etag = entityTag(text, headers);
    headers.ETag = etag;
    if (ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, etag)) deliver(exchange, 304, undefined, headers, REVALIDATE);
    else deliver(exchange, 200, new JsonText(text), headers, REVALIDATE);
  };
  /** What a thrown value that is not a Refusal is answered with; logged, since it is the server's failure. */
  const refusalFor = (exchange: Exchange, error: unknown): Refusal => {
    if (error instanceof Refusal) return error;
    const { requestId } = exchange;
    if (isDatabaseUnavailable(error)) {
      logger.warn({ reqId: requestId, err: error }, 'database unavailable');
      return new Refusal(503, 'service_unavailable', 'The service is unavailable; retry later.', { headers: { 'Retry-After': '1' } });
    }
    logger.error({ reqId: requestId, err: error }, 'unexpected failure');
    return new Refusal(500, 'internal_error', `An unexpected error occurred (request ${requestId}).`);
  };
  return {
    send,
    sendTagged,
    sendError(exchange, error) {
      const refusal = refusalFor(exchange, error);
      answerAfterBody(exchange, (close) => send(exchange, refusal.status, refusal.body(), close ? { ...refusal.headers, Connection: 'close' } : refusal.headers));
    },
  };
}
