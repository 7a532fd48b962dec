/**
 * The HTTP server itself: node:http with the slow-client bounds, the parser's refusals answered
 * (./clientError.ts), its connections bounded (./connections.ts), and a close that lets in-flight
 * requests finish.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../shared/logger.js';
import { answerClientErrors, MAX_REQUEST_HEAD_BYTES, type CorsHeadersFor } from './clientError.js';
import { trackConnections } from './connections.js';

export interface ListenOptions {
  port: number;
  host: string;
  /** A client must send all its headers within this, counted from the request's first byte. */
  headersTimeoutMs: number;
  /** A client must send its whole request within this, counted from the request's first byte. */
  requestTimeoutMs: number;
  /** Open connections at most (MAX_CONNECTIONS); at the bound a new one displaces the oldest idle one. */
  maxConnections: number;
  logger: Logger;
  /** CORS_ORIGINS set: the CORS headers node:http's own refusals carry for an allowed origin. */
  corsFor?: CorsHeadersFor | undefined;
}

export interface HttpListener {
  /** `http://host:port`. */
  origin: string;
  server: Server;
  /**
   * From now on every answer carries `Connection: close`, those in flight included, so keep-alive
   * clients and balancers open new connections (elsewhere, once readiness has failed) instead of
   * reusing these; the listener still accepts. The first step of a drain (../server.ts).
   */
  closeConnectionsAfterAnswers(): void;
  /** Stops accepting and resolves once in-flight requests have finished (or SHUTDOWN_GRACE_MS passed). */
  close(): Promise<void>;
}

const SHUTDOWN_GRACE_MS = 10_000;

/** Creates the HTTP server for `app` and resolves once it listens. */
export async function listenHttp(app: RequestListener, options: ListenOptions): Promise<HttpListener> {
  const { headersTimeoutMs: headersTimeout, requestTimeoutMs: requestTimeout } = options;
  const http = createServer(
    {
      // Slow clients are cut off: all headers within headersTimeout, the whole request within
      // requestTimeout, both counted from the request's first byte.
      headersTimeout,
      requestTimeout,
      // Node only looks for expired requests this often (30 s by default, which would let a slow
      // client hold a connection for up to 30 s past either bound); a scan is cheap. The scan also
      // closes a connection that has sent no complete request head within headersTimeout of its
      // accept, not a byte included (test/quick/idleConnections.test.ts).
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(headersTimeout / 4))),
      // A keep-alive connection waiting for its next request is closed after this: the scan above
      // does not see it (headersTimeout counts again only from that request's first byte).
      keepAliveTimeout: 5_000,
      // The contract's 431 limit, stated rather than inherited: node's default follows a
      // command-line flag, and the spec's header parameters are sized to fit within it.
      maxHeaderSize: MAX_REQUEST_HEAD_BYTES,
    },
    app,
  );
  answerClientErrors(http, options.logger, options.corsFor);
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  let closing: Promise<void> | undefined;
  // During a drain and a shutdown, keep-alive connections are told to close after their current
  // response: during the drain so balancers and clients move off them while this instance still
  // serves, at the close so the process need not wait out the keep-alive timeout of clients that
  // hold connections open.
  const connections = trackConnections(http, { maxConnections: options.maxConnections, logger: options.logger });
  const closeConnectionsAfterAnswers = () => connections.closeAfterAnswers();
  const close = () =>
    (closing ??= (async () => {
      closeConnectionsAfterAnswers();
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeIdleConnections();
      const force = setTimeout(() => {
        // Said, because each of these connections may be a request that gets no answer.
        options.logger.warn({ graceMs: SHUTDOWN_GRACE_MS, connections: connections.size }, 'requests still unfinished after the shutdown grace: closing their connections');
        http.closeAllConnections();
      }, SHUTDOWN_GRACE_MS);
      await closed;
      clearTimeout(force);
    })());
  return { origin: `http://${host}:${address.port}`, server: http, closeConnectionsAfterAnswers, close };
}
