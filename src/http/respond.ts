/**
 * The answer, the last step of every request (but the docs page and the raw contract), in one
 * module: the headers every answer carries (security headers, request id, those a step set ahead:
 * CORS, the rate limit's, a deprecated operation's), the entity tag and the 304 of a conditional
 * read, the contract check (test and dev), the Error of a refused or failed request, and the JSON
 * itself, all in one `writeHead`.
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Operation } from 'openapi-backend';
import parseRange from 'range-parser';
import type { Logger } from '../shared/logger.js';
import { BinaryBody, JsonText } from '../shared/schemas.js';
import { isDatabaseUnavailable } from '../shared/unavailable.js';
import { answerAfterBody } from './bodies/unread.js';
import { entityTag, entityTagOfDigest, ifNoneMatchMatches, ifRangeMatches, REVALIDATE } from './etag.js';
import type { AnyHandlerResult, Exchange } from './exchange.js';
import { refuse, Refusal } from '../errors/refusal.js';
import type { ResponseChecker } from './responseChecker.js';
import { SECURITY_HEADERS } from './securityHeaders.js';

/** The security headers but Cache-Control, flat (name, value, …): an answer's Cache-Control is its own. */
const SECURITY_HEADER_LIST: readonly string[] = Object.entries(SECURITY_HEADERS)
  .filter(([name]) => name !== 'Cache-Control')
  .flat();
const NO_STORE = SECURITY_HEADERS['Cache-Control'] as string;
/**
 * The CSP of bytes a handler answers (an image, a file): opened as a page, by a link or a
 * browser's guess, it runs nothing and reaches nothing (nosniff already keeps its media type).
 */
const SANDBOXED = `${SECURITY_HEADERS['Content-Security-Policy'] as string}; sandbox`;

/**
 * The headers every answer of the exchange starts with, as a flat list (name, value, …) for one
 * `writeHead`: the security headers, the request id, `cacheControl` (`no-store` unless the answer
 * says otherwise) and those set ahead (setAhead). None is set on the response before the answer:
 * node:http writes a flat list passed to `writeHead` as it is, but merges it header by header into
 * any set before; res.setHeader per header, or an object passed to writeHead, measured slower
 * under load (docs/performance.md).
 */
function exchangeHeaders(exchange: Exchange, cacheControl: string = NO_STORE): string[] {
  const list = [...SECURITY_HEADER_LIST, 'X-Request-Id', exchange.requestId, 'Cache-Control', cacheControl];
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
  if (body instanceof BinaryBody) {
    headers.push('Content-Type', body.mediaType, 'Content-Length', String(body.bytes.length));
    res.writeHead(status, headers).end(body.bytes);
    return;
  }
  const text = body instanceof JsonText ? body.text : JSON.stringify(body);
  headers.push('Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(text)));
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
 * Answers the exchange: its own headers (./exchange.ts; `cacheControl` replaces `no-store`), then
 * `headers`, then the body as writeJson writes it. One of `headers` that names an exchange header
 * (a Cache-Control a contract declares, say) replaces its value, as a later setHeader would: a
 * flat list is written as it is, and would otherwise send the header twice.
 */
export function answerJson(exchange: Exchange, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}, cacheControl?: string): void {
  const list = exchangeHeaders(exchange, cacheControl);
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
function checkedHeaders(exchange: Exchange, headers: Readonly<Record<string, string>>, cacheControl: string | undefined): Record<string, string> {
  const { res } = exchange;
  const all: Record<string, string> = {};
  for (const name of res.getHeaderNames()) all[name] = String(res.getHeader(name));
  const own = exchangeHeaders(exchange, cacheControl);
  for (let i = 0; i < own.length; i += 2) all[(own[i] as string).toLowerCase()] = own[i + 1] as string;
  for (const name in headers) all[name.toLowerCase()] = headers[name] as string;
  return all;
}

/**
 * The operations whose reads are conditional, from the contract: a GET whose 200 declares an
 * `ETag` header and which declares a 304. Their 200s are tagged and If-None-Match is answered
 * (./etag.ts); a later GET that declares the same gets it without code.
 */
function conditionalOperations(operations: readonly Operation[]): Set<string> {
  const conditional = new Set<string>();
  for (const operation of operations) {
    const responses = (operation.responses ?? {}) as Record<string, { headers?: Record<string, unknown> } | undefined>;
    const tagged = Object.keys(responses['200']?.headers ?? {}).some((name) => name.toLowerCase() === 'etag');
    if (operation.method === 'get' && operation.operationId && tagged && responses['304'] !== undefined) conditional.add(operation.operationId);
  }
  return conditional;
}

/**
 * The operations whose bytes are answered in ranges, from the contract: a GET that declares a
 * 206. Their 200s of bytes carry `Accept-Ranges: bytes`, and a GET with `Range` gets its part
 * (rangeOf); a later GET that declares the same gets it without code.
 */
function rangedOperations(operations: readonly Operation[]): Set<string> {
  const ranged = new Set<string>();
  for (const operation of operations) {
    if (operation.method === 'get' && operation.operationId && (operation.responses as Record<string, unknown> | undefined)?.['206'] !== undefined) ranged.add(operation.operationId);
  }
  return ranged;
}

/** A `bytes` ranges-specifier as RFC 9110 §14.1.2 writes it: range-parser reads text that is not one as "unsatisfiable". */
const BYTE_RANGES = /^bytes=[ \t]*(?:\d+-\d*|-\d+)(?:[ \t]*,[ \t]*(?:\d+-\d*|-\d+))*[ \t]*$/i;

/**
 * What a GET's `Range` asks of `size` bytes (RFC 9110 §14.2), read by range-parser (the parser of
 * Express's `send`): one range to answer 206 with (overlapping and adjacent ranges joined),
 * 'unsatisfiable' (416: no range of it within the bytes: each starts past the end, ends before
 * it starts, or is an empty suffix), or undefined for the whole answer, 200: no Range, an
 * If-Range that does not match `etag` (strongly), a value that is not a bytes ranges-specifier
 * (another unit included), or ranges that stay apart (no multipart/byteranges here).
 */
function rangeOf(req: IncomingMessage, size: number, etag: string | undefined): { start: number; end: number } | 'unsatisfiable' | undefined {
  const header = req.headers.range;
  if (header === undefined || req.method !== 'GET') return undefined;
  const ifRange = req.headers['if-range'];
  // Sent twice (an array), it is not one validator: no match either.
  if (ifRange !== undefined && (etag === undefined || typeof ifRange !== 'string' || !ifRangeMatches(ifRange, etag))) return undefined;
  if (!BYTE_RANGES.test(header)) return undefined;
  const ranges = parseRange(size, `bytes${header.slice(5)}`, { combine: true });
  if (ranges === -2) return undefined;
  if (ranges === -1) return 'unsatisfiable';
  if (ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  return ranges[0];
}

export interface Responder {
  /**
   * Sends a handler's result for the exchange's operation. A 200 of a conditional operation
   * (conditionalOperations) is serialised once and tagged from its bytes (./etag.ts), with
   * `Cache-Control: private, no-cache`, and answered 304 with the same headers and no body when
   * the request's If-None-Match matches. Every answer goes through the operation's contract check;
   * a violation turns it into a 500.
   */
  answer(exchange: Exchange, result: AnyHandlerResult): void;
  // A 200 of bytes of a ranged operation (rangedOperations) carries Accept-Ranges, and a Range
  // gets a 206 of its part or a 416 (rangeOf); If-None-Match is answered first, as RFC 9110 §13.2.2 orders them.
  /** Sends a body through the contract check of the exchange's operation (or none outside one). */
  send(exchange: Exchange, status: number, body: unknown, headers?: Readonly<Record<string, string>>): void;
  /**
   * The one place a refused or failed request is answered: a Refusal (../errors/refusal.ts) as it says;
   * a database that cannot be reached, a 503 to retry; anything else, a logged 500. A body the
   * request still has unread is taken care of first (./bodies/unread.ts, answerAfterBody).
   */
  sendError(exchange: Exchange, error: unknown): void;
}

/** `operations`: the contract's, dereferenced (openapi-backend's getOperations). */
export function createResponder(checker: ResponseChecker, operations: readonly Operation[], logger: Logger): Responder {
  const conditional = conditionalOperations(operations);
  const ranged = rangedOperations(operations);
  /** `cacheControl` replaces the exchange's `no-store` (only when the response passes the check). */
  const deliver = (exchange: Exchange, status: number, body: unknown, headers: Readonly<Record<string, string>>, cacheControl?: string): void => {
    if (checker.enabled) {
      const request = `${exchange.req.method ?? ''} ${exchange.req.url ?? ''}`;
      const violation = checker.check(exchange.operation?.operationId, status, body, checkedHeaders(exchange, headers, cacheControl), request);
      if (violation) {
        // Checking is on in test and dev only: there the 500 says what the answer would have broken.
        answerJson(exchange, 500, refuse('internal_error', 'breaksContract', violation.problems).body());
        return;
      }
    }
    answerJson(exchange, status, body, headers, cacheControl);
  };
  const send: Responder['send'] = (exchange, status, body, headers = {}) => deliver(exchange, status, body, headers);
  const answer: Responder['answer'] = (exchange, { status, body, headers = {} }) => {
    const operationId = exchange.operation?.operationId;
    const binary = body instanceof BinaryBody;
    const tagging = status === 200 && operationId !== undefined && conditional.has(operationId);
    const inRanges = binary && status === 200 && operationId !== undefined && ranged.has(operationId);
    if (!tagging && !inRanges) {
      deliver(exchange, status, body, binary ? { ...headers, 'Content-Security-Policy': SANDBOXED } : headers);
      return;
    }
    // Serialised once: the tag is taken from the bytes that are sent.
    const payload = binary ? body : new JsonText(body instanceof JsonText ? body.text : JSON.stringify(body));
    // The handler's headers are part of what the tag covers; the answer's copy gains the tag.
    // Bytes whose digest is known, answered without headers of the handler's, get the same tag from it.
    const digest = payload instanceof BinaryBody && Object.keys(headers).length === 0 ? payload.sha256 : undefined;
    const etag = !tagging ? undefined : digest !== undefined ? entityTagOfDigest(digest) : entityTag(payload instanceof BinaryBody ? payload.bytes : payload.text, headers);
    const tagged: Record<string, string> = {};
    for (const name in headers) tagged[name] = headers[name] as string;
    if (etag !== undefined) tagged.ETag = etag;
    if (binary) tagged['Content-Security-Policy'] = SANDBOXED;
    const cacheControl = tagging ? REVALIDATE : undefined;
    const ifNoneMatch = exchange.req.headers['if-none-match'];
    if (etag !== undefined && ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, etag)) {
      deliver(exchange, 304, undefined, tagged, cacheControl);
      return;
    }
    if (inRanges && payload instanceof BinaryBody) {
      tagged['Accept-Ranges'] = 'bytes';
      const size = payload.bytes.length;
      const range = rangeOf(exchange.req, size, etag);
      if (range === 'unsatisfiable') {
        sendError(exchange, refuse('range_not_satisfiable', 'pastTheEnd', size));
        return;
      }
      if (range !== undefined) {
        const part = new BinaryBody(payload.bytes.subarray(range.start, range.end + 1), payload.mediaType);
        deliver(exchange, 206, part, { ...tagged, 'Content-Range': `bytes ${range.start}-${range.end}/${size}` }, cacheControl);
        return;
      }
    }
    deliver(exchange, 200, payload, tagged, cacheControl);
  };
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
