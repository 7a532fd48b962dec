/**
 * A deliberately badly behaved HTTP/1.1 client over a raw TCP socket, for the abuse tests: it
 * writes whatever it is told whenever it is told (a byte at a time, oversized heads, bodies it
 * never finishes), and records exactly what came back and when: the response as raw bytes with
 * its headers in wire order, how many bytes it had written when the answer began, and when the
 * server closed the connection.
 */
import { connect, type Socket } from 'node:net';
import { parseResponses, type ParsedResponse } from './rawHttp.js';

/** A whole response as the client received it (parsed by rawHttp.ts, the one parser). */
export type RawResponse = ParsedResponse;

/** The value of a header (case-insensitive name), or undefined. */
export function header(response: RawResponse, name: string): string | undefined {
  return response.headers[name.toLowerCase()];
}

export class SocketClient {
  /** When the connection was opened (ms, Date.now()). */
  readonly startedAt = Date.now();
  /** Bytes handed to the socket so far. */
  bytesWritten = 0;
  /** `bytesWritten` when the first response byte arrived. */
  bytesWrittenWhenAnswered: number | undefined;
  /** ms after the start: the first response byte, and the end of the connection. */
  answeredAfterMs: number | undefined;
  closedAfterMs: number | undefined;
  /** The socket error the client saw, if any (EPIPE, ECONNRESET after the server closed). */
  errorCode: string | undefined;
  private received = Buffer.alloc(0);
  private readonly socket: Socket;
  private readonly closed: Promise<void>;

  constructor(host: string, port: number) {
    this.socket = connect({ host, port });
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => {
      if (this.answeredAfterMs === undefined) {
        this.answeredAfterMs = Date.now() - this.startedAt;
        this.bytesWrittenWhenAnswered = this.bytesWritten;
      }
      this.received = Buffer.concat([this.received, chunk]);
    });
    this.socket.on('error', (error: NodeJS.ErrnoException) => {
      this.errorCode ??= error.code ?? error.message;
    });
    this.closed = new Promise((resolve) =>
      this.socket.once('close', () => {
        this.closedAfterMs = Date.now() - this.startedAt;
        resolve();
      }),
    );
  }

  /** Writes `data`; resolves false when the connection is gone (the server cut it off). */
  write(data: Buffer | string): Promise<boolean> {
    if (this.socket.destroyed || this.socket.writableEnded) return Promise.resolve(false);
    this.bytesWritten += Buffer.byteLength(data);
    return new Promise((resolve) => this.socket.write(data, (error) => resolve(!error)));
  }

  isClosed(): boolean {
    return this.closedAfterMs !== undefined;
  }

  /** Whether any response byte has arrived. */
  isAnswered(): boolean {
    return this.answeredAfterMs !== undefined;
  }

  /** Everything received so far, raw. */
  raw(): Buffer {
    return this.received;
  }

  response(): RawResponse | undefined {
    return parseResponses(this.received).final;
  }

  /** Waits (at most `ms`) until the server closes the connection; true if it did. */
  async waitForClose(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
    await Promise.race([this.closed, timeout]);
    clearTimeout(timer);
    return this.isClosed();
  }

  /** Waits (at most `ms`) for a whole response; undefined if none arrived. */
  async waitForResponse(ms: number): Promise<RawResponse | undefined> {
    const deadline = Date.now() + ms;
    // Bounded polling: the parser is cheap and the tests read one response per connection.
    while (Date.now() < deadline) {
      const response = this.response();
      if (response || this.isClosed()) return response;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.response();
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Sends `request` whole and returns the response once the server has answered (and, if it will, closed). */
export async function exchange(host: string, port: number, request: Buffer | string, withinMs = 10_000): Promise<{ client: SocketClient; response: RawResponse }> {
  const client = new SocketClient(host, port);
  await client.write(request);
  const response = await client.waitForResponse(withinMs);
  client.destroy();
  if (!response) throw new Error(`no whole response within ${withinMs} ms; got ${JSON.stringify(client.raw().toString('latin1').slice(0, 300))}`);
  return { client, response };
}
