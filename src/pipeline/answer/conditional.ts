/**
 * Entity tags and conditional reads (RFC 9110 §13.1.2): wraps the rest and, once the handler (or
 * exactly-once's replay) has a result, tags a 200 of an operation that declares an `ETag` on it
 * with an entity tag taken from its bytes (src/domain/etag.ts). A conditional read's 200 also gets
 * `Cache-Control: private, no-cache`, or turns into a 304 when If-None-Match matches; a change's
 * 200 (updatePet) carries the tag of the new state, for the client's next If-Match. Inside the ranges stage (./ranges.ts), so If-None-Match is judged before
 * Range, as RFC 9110 §13.2.2 orders them, and Range's If-Range sees the tag set here.
 */
import type { Operation } from 'openapi-backend';
import { entityTag, entityTagOfDigest, ifNoneMatchMatches, REVALIDATE } from '../../domain/etag.js';
import type { Exchange } from '../../http/exchange.js';
import { SANDBOXED_CSP } from '../../http/securityHeaders.js';
import { resultStage, type Stage } from '../../http/stage.js';
import { BinaryBody, JsonText } from '../../shared/schemas.js';
import type { DeclaredResponses } from '../../http/shapes/declared.js';
import { EncodedBody, varyingByAccept, type Representations } from '../../http/shapes/representations.js';

/**
 * The operations whose 200 is tagged, from the contract (one that declares an `ETag` header on
 * it), and among them the conditional reads (a GET that also declares a 304). A later operation
 * that declares the same gets it without code.
 */
function taggedOperations(operations: readonly Operation[]): { tagged: Set<string>; conditionalReads: Set<string> } {
  const tagged = new Set<string>();
  const conditionalReads = new Set<string>();
  for (const operation of operations) {
    const responses = (operation.responses ?? {}) as Record<string, { headers?: Record<string, unknown> } | undefined>;
    if (!operation.operationId || !Object.keys(responses['200']?.headers ?? {}).some((name) => name.toLowerCase() === 'etag')) continue;
    tagged.add(operation.operationId);
    if (operation.method === 'get' && responses['304'] !== undefined) conditionalReads.add(operation.operationId);
  }
  return { tagged, conditionalReads };
}

/** The body as it is sent, in the representation the request's Accept chose: the tag is taken from it (one per representation). */
function encoded(exchange: Exchange, body: unknown, representations: Representations): { payload: BinaryBody | EncodedBody; varies: boolean } {
  if (body instanceof BinaryBody || body instanceof EncodedBody) return { payload: body, varies: false };
  const written = representations.written(exchange.operation?.responses as DeclaredResponses | undefined, 200, exchange.req.headers.accept, body, () => '');
  if (written === undefined) return { payload: new EncodedBody(body instanceof JsonText ? body.text : JSON.stringify(body), 'application/json; charset=utf-8', body), varies: false };
  return { payload: written.body, varies: written.varies };
}

/** The exchange's 200, tagged, or a conditional read's 304; any other result stays as it is. */
function tag(exchange: Exchange, representations: Representations, conditionalRead: boolean): undefined {
  const { result } = exchange;
  if (result === undefined || result.status !== 200) return undefined;
  const { body, headers = {} } = result;
  // Serialised once: the tag is taken from the bytes that are sent.
  const { payload, varies } = encoded(exchange, body, representations);
  // The handler's headers are part of what the tag covers. Bytes whose digest is known, answered
  // without headers of the handler's, get the same tag from it, without hashing megabytes again.
  const digest = payload instanceof BinaryBody && Object.keys(headers).length === 0 ? payload.sha256 : undefined;
  const etag = digest !== undefined ? entityTagOfDigest(digest) : entityTag(payload instanceof BinaryBody ? payload.bytes : payload.text, headers);
  // Cache-Control first: a handler's own (a contract that declares one) still wins, as it did over no-store.
  let tagged: Record<string, string> = conditionalRead ? { 'Cache-Control': REVALIDATE } : {};
  for (const name in headers) tagged[name] = headers[name] as string;
  tagged.ETag = etag;
  if (varies) tagged = varyingByAccept(tagged);
  const ifNoneMatch = exchange.req.headers['if-none-match'];
  if (conditionalRead && ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, etag)) {
    // A 304 carries the headers its 200 would have (RFC 9110 §15.4.5), bytes' sandbox included.
    if (payload instanceof BinaryBody) tagged['Content-Security-Policy'] = SANDBOXED_CSP;
    exchange.result = { status: 304, body: undefined, headers: tagged };
  } else {
    exchange.result = { status: 200, body: payload, headers: tagged };
  }
  return undefined;
}

/** `operations`: the contract's, dereferenced (openapi-backend's getOperations). */
export function conditionalStage(operations: readonly Operation[], representations: Representations): Stage {
  const { tagged, conditionalReads } = taggedOperations(operations);
  return resultStage('conditional', tagged, (exchange) => tag(exchange, representations, conditionalReads.has(exchange.operation?.operationId ?? '')));
}
