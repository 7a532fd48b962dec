/**
 * What an Error does with a request body it did not read to its end (the readers are in
 * ./bodies/: each records where the body stands on the exchange, `exchange.body`).
 */
import type { Exchange } from './exchange.js';

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
  if (exchange.body !== 'unread' || req.complete || req.readableEnded) {
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
  // A connection gone before the timer fires takes it along: it holds the answer and, through the
  // answer, the Error and whatever its stack trace keeps alive.
  socket.once('close', () => clearTimeout(timer));
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
