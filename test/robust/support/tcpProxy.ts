/**
 * A TCP proxy (node:net) to put between a server and its database, so a test can take the
 * database away from that one server without touching the database server others share.
 *
 *   open       bytes flow both ways
 *   refuse     every connection is reset (RST) and the listener is closed: new connections get
 *              ECONNREFUSED, as when the database host is up but PostgreSQL is not
 *   blackhole  the listener still accepts, but nothing is forwarded in either direction and new
 *              connections are never connected upstream: a network partition, where a peer
 *              neither answers nor says it is gone
 *
 * `restore()` heals a black hole the way TCP heals a partition: on the connections that were
 * established before the cut, what each side sent meanwhile is delivered late, in order, and a
 * close either side made meanwhile arrives then. So a query the server gave up on can still reach
 * the database after the heal, as it can in real life. Connections accepted during the black hole
 * never reached the database; the heal resets them.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export type ProxyMode = 'open' | 'refuse' | 'blackhole';

export interface TcpProxy {
  host: string;
  port: number;
  mode(): ProxyMode;
  /** Connections accepted since the start (including ones held in a black hole). */
  accepted(): number;
  cut(mode: 'refuse' | 'blackhole'): Promise<void>;
  restore(): Promise<void>;
  /** Resets every connection and stops listening. */
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  /** Undefined while a connection accepted during a black hole waits to be forwarded. */
  upstream: Socket | undefined;
}

const RELISTEN_ATTEMPTS = 40;
const RELISTEN_PAUSE_MS = 50;

export async function startTcpProxy(target: { host: string; port: number }, host = '127.0.0.1'): Promise<TcpProxy> {
  let mode: ProxyMode = 'open';
  let accepted = 0;
  const pairs = new Set<Pair>();
  let server: Server;

  /** A socket error: both ends go at once. */
  const drop = (pair: Pair) => {
    pairs.delete(pair);
    pair.client.destroy();
    pair.upstream?.destroy();
  };
  /** One end closed cleanly: the other ends after flushing what it still has to write. */
  const finish = (pair: Pair) => {
    // A partition hides the close too; the heal delivers it (see `resume`).
    if (mode === 'blackhole') return;
    if (!pair.client.destroyed) pair.client.end();
    if (pair.upstream && !pair.upstream.destroyed) pair.upstream.end();
    if (pair.client.destroyed && (pair.upstream?.destroyed ?? true)) pairs.delete(pair);
  };

  const connectUpstream = (pair: Pair) => {
    const upstream = connect(target);
    pair.upstream = upstream;
    upstream.setNoDelay(true);
    // A socket error without a listener would kill the test process; either end failing ends both.
    upstream.on('error', () => drop(pair));
    upstream.on('close', () => finish(pair));
    pair.client.pipe(upstream);
    upstream.pipe(pair.client);
  };

  const stall = (pair: Pair) => {
    if (!pair.upstream) return;
    pair.client.unpipe(pair.upstream);
    pair.upstream.unpipe(pair.client);
    // Paused sockets stop reading: the kernel buffers fill and the peers see silence, not an end.
    pair.client.pause();
    pair.upstream.pause();
  };

  const resume = (pair: Pair) => {
    if (!pair.upstream) {
      // Accepted during the black hole, never connected to the database: its client gave up on
      // the handshake long ago, so it is reset rather than opened late (each late one would cost
      // the shared database server a backend).
      pairs.delete(pair);
      if (!pair.client.destroyed) pair.client.resetAndDestroy();
      return;
    }
    if (pair.client.destroyed || pair.upstream.destroyed) {
      finish(pair);
      return;
    }
    // pipe() resumes the paused source; bytes it buffered meanwhile go first.
    pair.client.pipe(pair.upstream);
    pair.upstream.pipe(pair.client);
  };

  const onConnection = (client: Socket) => {
    accepted++;
    const pair: Pair = { client, upstream: undefined };
    pairs.add(pair);
    client.setNoDelay(true);
    client.on('error', () => drop(pair));
    client.on('close', () => finish(pair));
    if (mode === 'blackhole') {
      client.pause();
      return;
    }
    connectUpstream(pair);
  };

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server = createServer(onConnection);
      server.once('error', reject);
      server.listen({ host, port }, () => {
        server.off('error', reject);
        resolve();
      });
    });

  const stopListening = () => new Promise<void>((resolve) => server.close(() => resolve()));

  const resetAll = () => {
    for (const pair of [...pairs]) {
      pairs.delete(pair);
      // RST, not FIN: the peer sees ECONNRESET, as when the database host drops the connection.
      if (!pair.client.destroyed) pair.client.resetAndDestroy();
      if (pair.upstream && !pair.upstream.destroyed) pair.upstream.resetAndDestroy();
    }
  };

  await listen(0);
  const port = (server!.address() as AddressInfo).port;

  return {
    host,
    port,
    mode: () => mode,
    accepted: () => accepted,
    async cut(next) {
      if (mode !== 'open') throw new Error(`the proxy is already cut (${mode})`);
      mode = next;
      if (next === 'refuse') {
        const closed = stopListening();
        resetAll();
        await closed;
        return;
      }
      for (const pair of pairs) stall(pair);
    },
    async restore() {
      if (mode === 'refuse') {
        // The same port, so the server's DATABASE_URL stays right. Something else could take the
        // port meanwhile; the OS hands out ephemeral ports in sequence, so that is unlikely, and
        // it fails loudly rather than silently.
        for (let attempt = 1; ; attempt++) {
          try {
            await listen(port);
            break;
          } catch (error) {
            if (attempt >= RELISTEN_ATTEMPTS) throw error;
            await new Promise((resolve) => setTimeout(resolve, RELISTEN_PAUSE_MS));
          }
        }
        mode = 'open';
      } else if (mode === 'blackhole') {
        mode = 'open';
        for (const pair of [...pairs]) resume(pair);
      }
    },
    async close() {
      mode = 'refuse';
      const closed = server.listening ? stopListening() : Promise.resolve();
      resetAll();
      await closed;
    },
  };
}
