/**
 * The HTTP server's connections: each one's latest response (for the drain's `Connection: close`),
 * and how many may be open at all.
 *
 * node:http already closes a connection that completes no request head within headersTimeout of
 * its accept (with a 408, at its next connectionsCheckingInterval scan: ./listen.ts keeps that
 * short; test/quick/idleConnections.test.ts holds it). What it does not bound is how many connections a
 * flood opens within that time: 20,000 that never sent a byte exhausted the process's file
 * descriptors and ordinary requests failed. So the open connections are bounded below the
 * descriptor limit, and at the bound a new connection displaces the oldest one with no request in
 * progress (one that never sent a request first; never one being answered), so ordinary clients
 * keep getting through.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../shared/logger.js';

const LATEST_RESPONSE = Symbol('latest response');
/** A connection and the response to its latest request (answered or not). */
type TrackedSocket = Socket & { [LATEST_RESPONSE]?: ServerResponse };

/** Displacements are logged at most this often, as one line with their count. */
const DISPLACED_LOG_EVERY_MS = 10_000;

export interface ConnectionOptions {
  /** Open connections at most; at the bound a new one displaces the oldest idle one. */
  maxConnections: number;
  logger: Logger;
}

export interface Connections {
  /** Open connections now. */
  readonly size: number;
  /** From now on every answer carries `Connection: close`, those in flight included (the drain's first step). */
  closeAfterAnswers(): void;
}

/**
 * A connection is idle when no request of it is being answered: none yet, or its latest answer
 * ended. Ended, not flushed: a client that never reads a large answer (the docs page) would
 * otherwise hold its connection for ever, since node:http has no timeout on writing one.
 */
const idle = (socket: TrackedSocket): boolean => socket[LATEST_RESPONSE] === undefined || socket[LATEST_RESPONSE].writableEnded;

export function trackConnections(http: Server, options: ConnectionOptions): Connections {
  const { maxConnections, logger } = options;
  let connectionClose = false;
  // In accept order (a Set keeps insertion order), the oldest first: every open connection, and
  // those that have not yet completed a request head (the displacement's first pick).
  const open = new Set<TrackedSocket>();
  const fresh = new Set<TrackedSocket>();

  // What has not been logged yet: one line at most every DISPLACED_LOG_EVERY_MS, with the counts
  // since the line before; the last counts of a burst are logged when its interval is up.
  const unlogged = { displaced: 0, refused: 0 };
  let loggedAt = Number.NEGATIVE_INFINITY;
  let logTimer: NodeJS.Timeout | undefined;
  const logCounts = (): void => {
    logTimer = undefined;
    if (unlogged.displaced === 0 && unlogged.refused === 0) return;
    // Counts only: no address nor anything else a client sent.
    logger.warn({ ...unlogged, maxConnections, sinceMs: Number.isFinite(loggedAt) ? Math.round(performance.now() - loggedAt) : undefined }, 'connections at their bound: closed the oldest idle ones to let new ones in');
    unlogged.displaced = 0;
    unlogged.refused = 0;
    loggedAt = performance.now();
  };
  const count = (what: keyof typeof unlogged): void => {
    unlogged[what]++;
    if (logTimer !== undefined) return;
    const wait = loggedAt + DISPLACED_LOG_EVERY_MS - performance.now();
    if (wait <= 0) logCounts();
    // Unref'd: a pending count never keeps the process alive; the server's close logs it (below).
    else logTimer = setTimeout(logCounts, wait).unref();
  };
  http.once('close', () => {
    clearTimeout(logTimer);
    logCounts();
  });

  /** The oldest connection that never sent a request head, else the oldest whose latest answer has ended. */
  const oldestIdle = (newcomer: TrackedSocket): TrackedSocket | undefined => {
    for (const socket of fresh) if (socket !== newcomer) return socket;
    // Only when no connection is fresh: the flood the bound is for keeps `fresh` full.
    for (const socket of open) if (socket !== newcomer && idle(socket)) return socket;
    return undefined;
  };

  const drop = (socket: TrackedSocket): void => {
    socket.destroy();
    open.delete(socket);
    fresh.delete(socket);
  };

  // A connection that has not sent a request goes first: a flood of them is what the bound is
  // for, and a keep-alive client's idle connection may carry its next request at any moment.
  const displaceOldestIdle = (newcomer: TrackedSocket): void => {
    const victim = oldestIdle(newcomer);
    if (victim !== undefined) {
      drop(victim);
      count('displaced');
    } else {
      // Every other connection is being answered: the newcomer is the one that goes.
      drop(newcomer);
      count('refused');
    }
  };

  http.on('connection', (socket: TrackedSocket) => {
    open.add(socket);
    fresh.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      fresh.delete(socket);
    });
    if (open.size > maxConnections) displaceOldestIdle(socket);
  });
  // A property write and two reads per request, nothing allocated: the hot path. (`fresh` is
  // touched once per connection, at its first request.)
  // Tracked per connection, not per request: each socket remembers its latest response. A set of
  // in-flight responses, each removed on its 'close', kept every response alive long enough to be
  // promoted out of the young generation under PostgreSQL load, and the garbage collector's work
  // on them was most of the server's gap to its floor there (docs/performance.md).
  http.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    if (connectionClose) res.setHeader('Connection', 'close');
    const socket = req.socket as TrackedSocket;
    if (socket[LATEST_RESPONSE] === undefined) fresh.delete(socket);
    socket[LATEST_RESPONSE] = res;
  });

  return {
    get size() {
      return open.size;
    },
    closeAfterAnswers() {
      if (connectionClose) return;
      connectionClose = true;
      for (const socket of open) {
        const res = socket[LATEST_RESPONSE];
        if (res !== undefined && !res.headersSent) res.setHeader('Connection', 'close');
      }
    },
  };
}
