/**
 * Byte ranges (RFC 9110 §14): wraps the rest and, once there is a result, answers a 200 of bytes
 * of an operation that declares a 206 with `Accept-Ranges: bytes`, and a GET's `Range` with a 206
 * of its part or a 416. Outside the conditional stage (./conditional.ts): a 304 has been decided
 * before (RFC 9110 §13.2.2), and If-Range is compared with the tag it set.
 */
import type { IncomingMessage } from 'node:http';
import type { Operation } from 'openapi-backend';
import parseRange from 'range-parser';
import { refuse } from '../../errors/refusal.js';
import { ifRangeMatches } from '../../domain/etag.js';
import type { Exchange } from '../../http/exchange.js';
import { resultStage, type Stage } from '../../http/stage.js';
import { BinaryBody } from '../../shared/schemas.js';

/**
 * The operations whose bytes are answered in ranges, from the contract: a GET that declares a
 * 206. A later GET that declares the same gets it without code.
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

/** The exchange's 200 of bytes, with Accept-Ranges, or the 206 of its part; a 416 is thrown, for the exit to answer. */
function range(exchange: Exchange): undefined {
  const { result } = exchange;
  if (result === undefined || result.status !== 200 || !(result.body instanceof BinaryBody)) return undefined;
  const { body, headers = {} } = result;
  const size = body.bytes.length;
  // The tag the conditional stage set, if the operation is conditional (handlers never set ETag).
  const found = rangeOf(exchange.req, size, headers.ETag);
  if (found === 'unsatisfiable') throw refuse('range_not_satisfiable', 'pastTheEnd', size);
  const ranged: Record<string, string> = {};
  for (const name in headers) ranged[name] = headers[name] as string;
  ranged['Accept-Ranges'] = 'bytes';
  if (found === undefined) {
    exchange.result = { status: 200, body, headers: ranged };
  } else {
    ranged['Content-Range'] = `bytes ${found.start}-${found.end}/${size}`;
    exchange.result = { status: 206, body: new BinaryBody(body.bytes.subarray(found.start, found.end + 1), body.mediaType), headers: ranged };
  }
  return undefined;
}

/** `operations`: the contract's, dereferenced (openapi-backend's getOperations). */
export function rangesStage(operations: readonly Operation[]): Stage {
  return resultStage('ranges', rangedOperations(operations), range);
}
