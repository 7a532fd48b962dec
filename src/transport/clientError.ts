/**
 * Answers what node:http's parser refuses before any request reaches the app (headers too large,
 * a slow client timed out, bytes that are not HTTP/1.1) with the same Error body and security
 * headers as every other error (written by src/http/respond.ts, refusalBytes), instead of Node's bare
 * status line.
 *
 * The codes are the contract's own `ErrorCode`s (1.0.0's, which every version keeps), each
 * described there for these statuses: 400 `validation_failed`, 408 `service_unavailable`
 * (retry), 431 `payload_too_large`.
 */
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../shared/logger.js';
import { refuse, type Refusal } from '../errors/refusal.js';
import { refusalBytes } from '../http/respond.js';

/** The request line and headers together, in bytes; over it, node:http's parser refuses with a 431. */
export const MAX_REQUEST_HEAD_BYTES = 16 * 1024;

/** How long a refused client gets to read the answer before the socket is destroyed regardless. */
const LINGER_MS = 2_000;

/** The answer for a parser or timeout error; undefined when there is nobody left to answer. */
export function refusalFor(errorCode: string | undefined): Refusal | undefined {
  switch (errorCode) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return refuse('payload_too_large', 'head', MAX_REQUEST_HEAD_BYTES / 1024);
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return refuse('service_unavailable', 'requestTimeout');
    default:
      // Every other llhttp error (HPE_*) and anything unforeseen: the bytes are not a request we can read.
      return refuse('validation_failed', 'notHttp');
  }
}

/**
 * The Origin header among the bytes the parser had when it gave up (`error.rawPacket`), so a
 * browser page on an allowed origin can read the refusal. Nothing else is taken from those bytes.
 */
export function originIn(rawPacket: unknown): string | undefined {
  if (!Buffer.isBuffer(rawPacket)) return undefined;
  const match = /\r\norigin:[ \t]*([^\r\n]*?)[ \t]*\r\n/i.exec(rawPacket.toString('latin1'));
  return match?.[1];
}

/** CORS headers for an origin that may read answers (../features/cors/cors.ts), or undefined. */
export type CorsHeadersFor = (origin: string | undefined) => Readonly<Record<string, string>> | undefined;

/** node:http's own (undocumented) link from a socket to the response in progress on it. */
type ServerSocket = Socket & { _httpMessage?: ServerResponse | null };

/**
 * Installs the 'clientError' listener. Node calls it for parser errors and for the header and
 * request timeouts; with a listener installed, closing the socket is our job.
 */
export function answerClientErrors(server: Server, logger: Logger, corsFor?: CorsHeadersFor): void {
  // The parser reports again for every chunk that arrives after its first error: answer once.
  const answered = new WeakSet<Socket>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: ServerSocket) => {
    if (answered.has(socket)) return;
    answered.add(socket);
    const refusal = refusalFor(error.code);
    // A response already under way cannot be replaced without corrupting what the client reads.
    const midResponse = socket._httpMessage?.headersSent === true;
    if (!refusal || !socket.writable || midResponse) {
      socket.destroy();
      return;
    }
    // Only the reason: `error.rawPacket` holds the request's bytes, Authorization header included.
    logger.info({ status: refusal.status, reason: error.code }, 'request refused by the HTTP parser');
    // end(), not destroy(): destroying with unread input would reset the connection and could
    // discard the answer before the client reads it. The bytes that still arrive are read (and
    // refused again, silently) until the client closes or the linger runs out.
    socket.end(refusalBytes(refusal, corsFor?.(originIn((error as { rawPacket?: unknown }).rawPacket))));
    const linger = setTimeout(() => socket.destroy(), LINGER_MS);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
  });
}
