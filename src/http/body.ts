/**
 * Reading a request body: the media type (content-type parses it), at most MAX_BODY_BYTES
 * (raw-body stops at the limit, where body-parser would read a refused body to its end), strict
 * UTF-8 (raw-body's decoder would quietly turn bad bytes into U+FFFD), then JSON. A refused body
 * is drained, not left unread (see drain). Each step records where the body stands on the
 * exchange (`exchange.body`), so whoever answers last knows whether anything is left to drain.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { parse as parseContentType } from 'content-type';
import getRawBody from 'raw-body';
import type { ErrorCode } from '../schemas.js';
import type { Exchange } from './exchange.js';

export const MAX_BODY_BYTES = 64 * 1024;
/** How much of a body refused unread is drained, and for how long, before the socket is cut. */
const MAX_DRAIN_BYTES = 1024 * 1024;
const DRAIN_MS = 2_000;

/** Why a body was refused: the status and code of its Error. */
export interface BodyRefusal {
  status: 400 | 413 | 415;
  code: ErrorCode;
  message: string;
}

export type BodyOutcome = { ok: true; value: unknown } | { ok: false; refusal: BodyRefusal | undefined };

const TOO_LARGE: BodyRefusal = { status: 413, code: 'payload_too_large', message: `The request body is larger than ${MAX_BODY_BYTES} bytes.` };

/**
 * For an answer given without reading the body. Closing right after it would make the kernel
 * reset the connection over the bytes the client is still sending, and a reset can destroy the
 * answer before the client reads it (nginx calls the cure a lingering close). So the rest of the
 * body is read and dropped: if it ends within MAX_DRAIN_BYTES and DRAIN_MS the connection serves
 * on; otherwise the socket is destroyed, by when the client has had the answer for a while.
 */
export function drain(exchange: Exchange): void {
  const { req } = exchange;
  exchange.body = 'draining';
  let drained = 0;
  const cut = (): void => {
    req.socket.destroy();
  };
  const timer = setTimeout(cut, DRAIN_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > MAX_DRAIN_BYTES) cut();
  });
  req.resume();
  req.once('end', () => clearTimeout(timer));
  req.socket.once('close', () => clearTimeout(timer));
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
 * Reads the body of a request whose operation accepts the media types `accepted`. Resolves with
 * the parsed JSON, or with the refusal to answer (undefined when the client went away).
 */
export async function readJsonBody(exchange: Exchange, accepted: readonly string[]): Promise<BodyOutcome> {
  const { req } = exchange;
  const media = mediaTypeOf(req);
  const encoding = req.headers['content-encoding'];
  if (!media || !accepted.includes(media.type) || !media.utf8 || (encoding !== undefined && encoding.toLowerCase() !== 'identity')) {
    drain(exchange);
    // Compressed bodies are refused too: a 64 KiB API has nothing to gain, and inflating invites bombs.
    return { ok: false, refusal: { status: 415, code: 'unsupported_media_type', message: `The request body must be uncompressed UTF-8 ${accepted.join(' or ')}.` } };
  }
  const length = req.headers['content-length'];
  let buffer: Buffer;
  try {
    buffer = await getRawBody(req, { length, limit: MAX_BODY_BYTES });
  } catch (error) {
    return { ok: false, refusal: refusalOf(exchange, (error as { type?: unknown }).type) };
  }
  exchange.body = 'read';
  if (!isUtf8(buffer)) return { ok: false, refusal: { status: 400, code: 'invalid_json', message: 'The request body is not valid UTF-8.' } };
  try {
    return { ok: true, value: JSON.parse(buffer.toString('utf8')) as unknown };
  } catch {
    return { ok: false, refusal: { status: 400, code: 'invalid_json', message: 'The request body is not valid JSON.' } };
  }
}

/**
 * raw-body's error types, as refusals. The body stays `unread` where raw-body stopped mid-way (the
 * client went away, or a failure nobody foresaw), so the answer drains what is left, as it would
 * for a body never read.
 */
function refusalOf(exchange: Exchange, type: unknown): BodyRefusal | undefined {
  switch (type) {
    case 'entity.too.large':
      drain(exchange);
      return TOO_LARGE;
    case 'request.size.invalid':
      // The stream ended short of the declared length: nothing is left to read.
      exchange.body = 'read';
      return { status: 400, code: 'invalid_json', message: 'The request body is shorter than its Content-Length.' };
    case 'request.aborted':
      return undefined;
    default:
      throw new Error(`reading the request body failed (${String(type)})`);
  }
}
