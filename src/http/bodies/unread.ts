/**
 * What an Error does with a request body it did not read to its end (the readers of this
 * folder each record where the body stands on the exchange, `exchange.body`).
 */
import type { Exchange } from '../exchange.js';

/**
 * A refused body that declares at most this many bytes is read and dropped before the answer, so
 * the connection serves on; it must be in within SERVE_ON_WITHIN_MS, or it is answered with
 * `Connection: close` after all (and lingers, below).
 */
const SERVE_ON_MAX_BYTES = 1024 * 1024;
const SERVE_ON_WITHIN_MS = 2_000;

/**
 * The lingering close, after an answer with `Connection: close` (nginx's `lingering_close`): what
 * still arrives is read and dropped, never kept (each chunk is garbage once counted: RSS rises by
 * what waits for the collector, some tens of MiB, whether 256 MiB or 1 GiB arrives;
 * test/robust/uploadMemory.test.ts), until the client closes or one of these bounds is reached:
 * - LINGER_MS after the answer in all (nginx's `lingering_time`, 30 s): a client sending for
 *   longer than that is sending far more than it may; node:http's REQUEST_TIMEOUT_MS, counted from
 *   the request's first byte, bounds it too;
 * - LINGER_IDLE_MS without a byte (nginx's `lingering_timeout`, 5 s): a client that stopped
 *   sending but keeps the connection open (a declared body never sent, say) does not hold it;
 * - LINGER_MAX_BYTES read and dropped: a declared body is never read past its Content-Length
 *   (the request is then complete), so this caps what one refused request may cost in reading on
 *   a fast link, where 30 s would be many gigabytes; a GiB keeps the case this exists for (a big
 *   file sent whole to the wrong place, or to a 5 MiB limit) answered, and is what a 1 Gbit/s
 *   link carries in under 10 s.
 * Lingering connections count as idle for MAX_CONNECTIONS (src/transport/connections.ts): at the
 * bound, they are the first displaced.
 */
const LINGER_MS = 30_000;
const LINGER_IDLE_MS = 5_000;
const LINGER_MAX_BYTES = 1024 ** 3;

/**
 * For an Error that answers a request whose body was not read to its end (a 401, a 404, a 413).
 * A client that is still sending cannot be answered on a connection that stays open unless the
 * rest is read, and closing while bytes still arrive makes the kernel reset the connection, which
 * can destroy the answer before the client reads it (the reason for nginx's lingering close). So:
 * - a body whose Content-Length is at most SERVE_ON_MAX_BYTES is read and dropped first, then
 *   answered on a connection that serves on (`answer(false)`);
 * - any other (larger, chunked, or not in within SERVE_ON_WITHIN_MS) is answered at once with
 *   `Connection: close` (`answer(true)`), the connection is half-closed once the answer is out
 *   (FIN: the client reads the answer, then the end), and what still arrives is read and dropped
 *   within the linger's bounds above; the socket is cut only at one of them.
 * A connection whose client reads the answer is therefore never reused with unread bytes in it,
 * and a client that sends its whole body before reading (up to the bounds) still reads its answer.
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
  const timers: NodeJS.Timeout[] = [];
  const after = (ms: number, run: () => void): NodeJS.Timeout => {
    const timer = setTimeout(run, ms);
    // A connection gone before a timer fires takes it along: it holds the answer and, through the
    // answer, the Error and whatever its stack trace keeps alive.
    timer.unref();
    timers.push(timer);
    return timer;
  };
  const clearTimers = (): void => timers.forEach(clearTimeout);
  socket.once('close', clearTimers);
  const cut = (): void => void socket.destroy();

  let answered = false;
  let idle: NodeJS.Timeout | undefined;
  let drained = 0;
  const respond = (close: boolean): void => {
    if (answered) return;
    answered = true;
    clearTimers();
    if (!close) {
      // A connection that serves on must not gather a listener per refused request.
      socket.off('close', clearTimers);
    } else {
      // node:http destroys a socket it answered with Connection: close as soon as the answer is
      // written (destroySoon); with the client still sending, that is the reset described above.
      // Half-closed instead: the client's own close, or a bound of the linger, ends it.
      socket.destroySoon = () => void socket.end();
      after(LINGER_MS, cut);
      idle = after(LINGER_IDLE_MS, cut);
    }
    answer(close);
  };
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (!answered) return;
    idle?.refresh();
    if (drained > LINGER_MAX_BYTES) cut();
  });
  req.once('end', () => respond(false));
  req.resume();
  if (req.headers['transfer-encoding'] !== undefined || !(declared <= SERVE_ON_MAX_BYTES)) respond(true);
  // Unless it ended first and was answered on an open connection.
  else after(SERVE_ON_WITHIN_MS, () => respond(true));
}
