/**
 * Reading a request body: the media type (content-type parses it), at most MAX_BODY_BYTES
 * (raw-body stops at the limit, where body-parser would read a refused body to its end), strict
 * UTF-8 (raw-body's decoder would quietly turn bad bytes into U+FFFD), then JSON. Each step
 * records where the body stands on the exchange (`exchange.body`), so the Error that answers a
 * refused request knows whether anything of it is left (answerAfterBody).
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { parse as parseContentType } from 'content-type';
import getRawBody from 'raw-body';
import type { Exchange } from './exchange.js';
import { invalidFields, refuse, type Refusal } from '../errors/refusal.js';
import { firstIllFormedString } from './wellFormed.js';

export const MAX_BODY_BYTES = 64 * 1024;
/** How much of a body refused unread is read and dropped, and for how long, before the socket is cut. */
const MAX_DRAIN_BYTES = 1024 * 1024;
const DRAIN_MS = 2_000;

/**
 * For an Error that answers a request whose body was not read to its end (a 401, a 404, a 413).
 * A client that is still sending cannot be answered on a connection that stays open unless the
 * rest is read, and closing at once would make the kernel reset the connection over the bytes
 * still arriving, which can destroy the answer before the client reads it (nginx calls the cure
 * a lingering close). So:
 * - a body whose Content-Length is at most MAX_DRAIN_BYTES is read and dropped first, then
 *   answered on a connection that serves on (`answer(false)`);
 * - any other (larger, chunked, or not in within DRAIN_MS) is answered at once with
 *   `Connection: close` (`answer(true)`); what still arrives is read and dropped, and the socket
 *   is cut after MAX_DRAIN_BYTES or DRAIN_MS, by when the client has had the answer for a while.
 * A connection whose client reads the answer is therefore never reused with unread bytes in it.
 */
export function answerAfterBody(exchange: Exchange, answer: (close: boolean) => void): void {
  const { req } = exchange;
  if (exchange.body !== 'unread' || req.complete) {
    answer(false);
    return;
  }
  exchange.body = 'draining';
  const { socket } = req;
  const declared = Number(req.headers['content-length']);
  let answered = false;
  const respond = (close: boolean): void => {
    if (answered) return;
    answered = true;
    // node:http destroys a socket it answered with Connection: close as soon as the answer is
    // written (destroySoon); with the client still sending, that is the reset described above.
    // Half-closed instead: the cut below, or the client's own close, ends it.
    if (close) socket.destroySoon = () => void socket.end();
    answer(close);
  };
  let drained = 0;
  // Fires once, unless the body ended first and was answered on an open connection.
  const cut = (): void => {
    respond(true);
    socket.destroy();
  };
  const timer = setTimeout(cut, DRAIN_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > MAX_DRAIN_BYTES) cut();
  });
  req.once('end', () => {
    if (answered) return;
    clearTimeout(timer);
    respond(false);
  });
  req.resume();
  if (req.headers['transfer-encoding'] !== undefined || !(declared <= MAX_DRAIN_BYTES)) respond(true);
}

/** The media type without parameters, lower-cased, and whether its charset is UTF-8. */
function mediaTypeOf(req: IncomingMessage): { type: string; utf8: boolean } | undefined {
  try {
    const { type, parameters } = parseContentType(req);
    const charset = parameters.charset?.toLowerCase();
    return { type, utf8: charset === undefined || charset === 'utf-8' || charset === 'utf8' };
  } catch {
    return undefined;
  }
}

/**
 * Reads the body of a request whose operation accepts the media types `accepted`: resolves with
 * the parsed JSON, or rejects with the Refusal to answer. A body refused before its end stays
 * `unread`, so the answer takes care of the rest (answerAfterBody).
 */
export async function readJsonBody(exchange: Exchange, accepted: readonly string[]): Promise<unknown> {
  const { req } = exchange;
  const media = mediaTypeOf(req);
  const encoding = req.headers['content-encoding'];
  if (!media || !accepted.includes(media.type) || !media.utf8 || (encoding !== undefined && encoding.toLowerCase() !== 'identity')) {
    // Compressed bodies are refused too: a 64 KiB API has nothing to gain, and inflating invites bombs.
    throw refuse('unsupported_media_type', 'notAccepted', accepted);
  }
  const length = req.headers['content-length'];
  let buffer: Buffer;
  try {
    buffer = await getRawBody(req, { length, limit: MAX_BODY_BYTES });
  } catch (error) {
    throw refusalOf(exchange, (error as { type?: unknown }).type);
  }
  exchange.body = 'read';
  if (!isUtf8(buffer)) throw refuse('invalid_json', 'notUtf8');
  let body: unknown;
  try {
    body = JSON.parse(buffer.toString('utf8')) as unknown;
  } catch {
    throw refuse('invalid_json', 'notJson');
  }
  // Only a \u escape can make a lone surrogate: the bytes are valid UTF-8.
  const field = buffer.includes('\\u') ? firstIllFormedString(body) : undefined;
  if (field !== undefined) {
    const message = 'is not well-formed Unicode: it holds a lone surrogate (an unpaired \\uD800-\\uDFFF escape)';
    throw invalidFields([{ in: 'body', field, message }]);
  }
  return body;
}

/**
 * raw-body's error types, as Refusals. The body stays `unread` where raw-body stopped mid-way (at
 * the limit, or the client went away: its answer goes nowhere), so the answer takes care of the rest.
 */
function refusalOf(exchange: Exchange, type: unknown): Refusal {
  switch (type) {
    case 'entity.too.large':
      return refuse('payload_too_large', 'body', MAX_BODY_BYTES);
    case 'request.size.invalid':
      // The stream ended short of the declared length: nothing is left to read.
      exchange.body = 'read';
      return refuse('invalid_json', 'shorterThanDeclared');
    case 'request.aborted':
      return refuse('invalid_json', 'clientGone');
    default:
      throw new Error(`reading the request body failed (${String(type)})`);
  }
}
