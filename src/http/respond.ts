/**
 * The answer, the last step of every request (but the docs page and the raw contract), in one
 * module that only writes: the headers every answer carries (security headers, request id, those a
 * step set ahead: CORS, the rate limit's, a deprecated operation's), the answer's own, the contract
 * check (test and dev), the Error of a refused or failed request, and the body, all in one
 * `writeHead`. What the answer is, its ETag and 304, its byte ranges, is decided before, by stages
 * that wrap the handler (src/pipeline/answer/: conditional.ts, ranges.ts), so a result gets them
 * alike whoever made it (the handler, exactly-once's replay).
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Logger } from '../shared/logger.js';
import { BinaryBody, JsonText } from '../shared/schemas.js';
import { isDatabaseUnavailable } from '../shared/unavailable.js';
import { answerAfterBody } from './bodies/unread.js';
import type { AnyHandlerResult, Exchange } from './exchange.js';
import { refuse, Refusal } from '../errors/refusal.js';
import type { ResponseChecker } from './responseChecker.js';
import { SANDBOXED_CSP, SECURITY_HEADERS } from './securityHeaders.js';
import { EncodedBody, varyingByAccept, type Representations } from './shapes/representations.js';
import type { DeclaredResponses } from './shapes/declared.js';
import { redactApiKeys } from '../domain/apiKey.js';

/** The security headers but Cache-Control, flat (name, value, …): an answer's Cache-Control is its own. */
const SECURITY_HEADER_LIST: readonly string[] = Object.entries(SECURITY_HEADERS)
  .filter(([name]) => name !== 'Cache-Control')
  .flat();
const NO_STORE = SECURITY_HEADERS['Cache-Control'] as string;
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The headers every answer of the exchange starts with, as a flat list (name, value, …) for one
 * `writeHead`: the security headers, the request id, `Cache-Control: no-store` (which one among the
 * answer's headers replaces: answerJson) and those set ahead (setAhead). None is set on the response
 * before the answer: node:http writes a flat list passed to `writeHead` as it is, but merges it
 * header by header into any set before; res.setHeader per header, or an object passed to
 * writeHead, measured slower under load (docs/performance.md).
 */
function exchangeHeaders(exchange: Exchange): string[] {
  const list = [...SECURITY_HEADER_LIST, 'X-Request-Id', exchange.requestId, 'Cache-Control', NO_STORE];
  const { ahead } = exchange;
  if (ahead !== undefined) for (const name in ahead) list.push(name, ahead[name] as string);
  return list;
}

/** Where each of exchangeHeaders' own headers has its value, by lower-case name: the same for every exchange. */
const OWN_VALUE_AT: ReadonlyMap<string, number> = new Map(
  [...SECURITY_HEADER_LIST, 'X-Request-Id', '', 'Cache-Control', ''].flatMap((name, i) => (i % 2 === 0 ? [[name.toLowerCase(), i + 1] as const] : [])),
);
const OWN_LENGTH = SECURITY_HEADER_LIST.length + 4;

/** Where `name`'s value stands in an exchange's list (its own headers, then those set ahead), or undefined. */
function valueAt(list: readonly string[], name: string): number | undefined {
  const lower = name.toLowerCase();
  const own = OWN_VALUE_AT.get(lower);
  if (own !== undefined) return own;
  for (let i = OWN_LENGTH; i < list.length; i += 2) {
    const listed = list[i] as string;
    if (listed.length === lower.length && listed.toLowerCase() === lower) return i + 1;
  }
  return undefined;
}

/**
 * Makes every answer of the exchange carry a header, whatever answers it from then on (CORS, the
 * rate limit's, a deprecated operation's); a later answer's own header of that name wins.
 */
export function setAhead(exchange: Exchange, name: string, value: string): void {
  (exchange.ahead ??= {})[name] = value;
}

/** For a lane that writes its answer itself (Express, ./express.ts): the exchange's headers set on the response ahead of it. */
export function setExchangeHeaders(exchange: Exchange): void {
  const list = exchangeHeaders(exchange);
  for (let i = 0; i < list.length; i += 2) exchange.res.setHeader(list[i] as string, list[i + 1] as string);
}

/**
 * Writes a body with its length (or none when `body` is undefined) after `headers`, a flat
 * list (name, value, …) that it extends, in one `writeHead`: nothing per request but the
 * serialisation itself. A value is JSON; bytes and text already encoded (an EncodedBody: XML,
 * Problem Details) carry their own media type. Headers set on the response before stay (node:http
 * merges the list into them).
 */
export function writeJson(res: ServerResponse, status: number, body: unknown, headers: string[] = []): void {
  // A response the spec declares without content (204, say): no body, no media type.
  if (body === undefined) {
    res.writeHead(status, headers).end();
    return;
  }
  if (body instanceof BinaryBody) {
    headers.push('Content-Type', body.mediaType, 'Content-Length', String(body.bytes.length));
    res.writeHead(status, headers).end(body.bytes);
    return;
  }
  const text = body instanceof EncodedBody ? body.text : body instanceof JsonText ? body.text : JSON.stringify(body);
  headers.push('Content-Type', body instanceof EncodedBody ? body.contentType : JSON_TYPE, 'Content-Length', String(Buffer.byteLength(text)));
  res.writeHead(status, headers).end(text);
}

/**
 * Answers a request of a listener outside the API (metrics'), which has no exchange: the security
 * headers and `no-store`, then `headers`, then the body as writeJson writes it (bytes of their
 * own media type included).
 */
export function answerOutside(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const list = [...SECURITY_HEADER_LIST, 'Cache-Control', NO_STORE];
  for (const name in headers) list.push(name, headers[name] as string);
  writeJson(res, status, body, list);
}

/** A refusal answered outside the API (metrics' listener): its status, its body and its headers. */
export function refuseOutside(res: ServerResponse, refusal: Refusal): void {
  answerOutside(res, refusal.status, refusal.body(), refusal.headers);
}

/**
 * A refusal as a whole HTTP/1.1 response, for node:http's own refusals (src/transport/clientError.ts),
 * written straight to a socket that has no ServerResponse: the same body and headers as any
 * Error, with `headers` (CORS) and `Connection: close`.
 */
export function refusalBytes(refusal: Refusal, headers: Readonly<Record<string, string>> = {}): Buffer {
  const body = Buffer.from(JSON.stringify(refusal.body()), 'utf8');
  const list: Array<[string, string | number]> = [
    ['Content-Type', 'application/json; charset=utf-8'],
    ['Content-Length', body.length],
    ...Object.entries(SECURITY_HEADERS),
    ...Object.entries(refusal.headers ?? {}),
    ...Object.entries(headers),
    ['Date', new Date().toUTCString()],
    ['Connection', 'close'],
  ];
  const head = `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}\r\n${list.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

/**
 * Answers the exchange: its own headers (./exchange.ts), then `headers`, then the body as
 * writeJson writes it. One of `headers` that names an exchange header (a tagged answer's
 * Cache-Control, the sandbox of bytes) replaces its value, as a later setHeader would: a flat list
 * is written as it is, and would otherwise send the header twice.
 */
export function answerJson(exchange: Exchange, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const list = exchangeHeaders(exchange);
  for (const name in headers) {
    const at = valueAt(list, name);
    if (at === undefined) list.push(name, headers[name] as string);
    else list[at] = headers[name] as string;
  }
  writeJson(exchange.res, status, body, list);
}

/**
 * The headers the contract check judges: every header already on the response (the sandbox's
 * marker, a shutdown's Connection: close), the exchange's own (those set ahead included) and the
 * ones passed in, by lower-case name as node:http keeps them. Only in test and dev: production
 * never copies them.
 */
function checkedHeaders(exchange: Exchange, headers: Readonly<Record<string, string>>): Record<string, string> {
  const { res } = exchange;
  const all: Record<string, string> = {};
  for (const name of res.getHeaderNames()) all[name] = String(res.getHeader(name));
  const own = exchangeHeaders(exchange);
  for (let i = 0; i < own.length; i += 2) all[(own[i] as string).toLowerCase()] = own[i + 1] as string;
  for (const name in headers) all[name.toLowerCase()] = headers[name] as string;
  return all;
}

export interface Responder {
  /**
   * Sends a result the stages before made (the handler's, tagged, ranged, a 304): bytes with the
   * sandboxed CSP, everything through the contract check of the exchange's operation, where a
   * violation turns it into a 500.
   */
  answer(exchange: Exchange, result: AnyHandlerResult): void;
  /** Sends a body through the contract check of the exchange's operation (or none outside one). */
  send(exchange: Exchange, status: number, body: unknown, headers?: Readonly<Record<string, string>>): void;
  /**
   * The one place a refused or failed request is answered: a Refusal (../errors/refusal.ts) as it says;
   * a database that cannot be reached, a 503 to retry; anything else, a logged 500. A body the
   * request still has unread is taken care of first (./bodies/unread.ts, answerAfterBody).
   */
  sendError(exchange: Exchange, error: unknown): void;
}

/**
 * `representations` chooses and writes each answer's representation (./shapes/representations.ts);
 * an answer no operation declares (an unknown path's 404) is JSON.
 */
export function createResponder(checker: ResponseChecker, logger: Logger, representations: Representations): Responder {
  const send: Responder['send'] = (exchange, status, sent, headers = {}) => {
    let body: unknown = sent;
    let value: unknown = sent;
    let mediaType: string | undefined;
    if (sent instanceof EncodedBody) value = sent.value;
    else if (sent !== undefined && !(sent instanceof BinaryBody)) {
      const instance = () => redactApiKeys((exchange.req.url ?? '/').split('?', 1)[0] ?? '/');
      const written = representations.written(exchange.operation?.responses as DeclaredResponses | undefined, status, exchange.req.headers.accept, sent, instance);
      if (written !== undefined) {
        ({ body, mediaType } = written);
        value = written.body.value;
        if (written.varies) headers = varyingByAccept(headers);
      }
    }
    if (checker.enabled) {
      const request = `${exchange.req.method ?? ''} ${exchange.req.url ?? ''}`;
      const violation = checker.check(exchange.operation?.operationId, status, value, checkedHeaders(exchange, headers), request, mediaType);
      if (violation) {
        // Checking is on in test and dev only: there the 500 says what the answer would have broken.
        answerJson(exchange, 500, refuse('internal_error', 'breaksContract', violation.problems).body());
        return;
      }
    }
    answerJson(exchange, status, body, headers);
  };
  const answer: Responder['answer'] = (exchange, { status, body, headers = {} }) =>
    send(exchange, status, body, body instanceof BinaryBody ? { ...headers, 'Content-Security-Policy': SANDBOXED_CSP } : headers);
  /** What a thrown value that is not a Refusal is answered with; logged, since it is the server's failure. */
  const refusalFor = (exchange: Exchange, error: unknown): Refusal => {
    if (error instanceof Refusal) return error;
    const { requestId } = exchange;
    if (isDatabaseUnavailable(error)) {
      logger.warn({ reqId: requestId, err: error }, 'database unavailable');
      return refuse('service_unavailable', 'database');
    }
    logger.error({ reqId: requestId, err: error }, 'unexpected failure');
    return refuse('internal_error', 'unexpected', requestId);
  };
  function sendError(exchange: Exchange, error: unknown): void {
    const refusal = refusalFor(exchange, error);
    answerAfterBody(exchange, (close) => send(exchange, refusal.status, refusal.body(), close ? { ...refusal.headers, Connection: 'close' } : refusal.headers));
  }
  return { answer, send, sendError };
}
