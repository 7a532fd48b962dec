/**
 * A body's bytes, up to a limit: raw-body stops at the limit (body-parser would read a refused
 * body to its end), and refuses a declared Content-Length over it before reading a byte. Each
 * outcome records where the body stands on the exchange, so the Error that answers a refused
 * request knows whether anything of it is left to drain (./unread.ts, answerAfterBody).
 */
import getRawBody from 'raw-body';
import { refuse, type Refusal } from '../../errors/refusal.js';
import type { Exchange } from '../exchange.js';

export async function readBytes(exchange: Exchange, limit: number): Promise<Buffer> {
  const { req } = exchange;
  let bytes: Buffer;
  try {
    bytes = await getRawBody(req, { length: req.headers['content-length'], limit });
  } catch (error) {
    throw refusalOf(exchange, (error as { type?: unknown }).type, limit);
  }
  exchange.body = 'read';
  return bytes;
}

/**
 * raw-body's error types, as Refusals. The body stays `unread` where raw-body stopped mid-way (at
 * the limit, or the client went away: its answer goes nowhere), so the answer takes care of the rest.
 */
function refusalOf(exchange: Exchange, type: unknown, limit: number): Refusal {
  switch (type) {
    case 'entity.too.large':
      return refuse('payload_too_large', 'body', limit);
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
