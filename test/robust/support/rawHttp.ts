/**
 * One HTTP/1.1 request over a raw TCP socket (node:net), written in parts on command, with a
 * precise record of what the client saw: whether the connection was ever established, every
 * byte that came back, interim (1xx) responses, the final response, and how the connection ended.
 * Nothing is retried and nothing is hidden by a client library.
 */
import { connect, type Socket } from 'node:net';

export type Outcome =
  /** The TCP connection was never established (e.g. ECONNREFUSED): the server never had it. */
  | { kind: 'refused'; code: string }
  /** Connected, then the connection ended (FIN or RST) before a single response byte. */
  | { kind: 'closed-before-response'; code: string }
  /** A whole final response (1xx interim responses before it are listed in `interim`). */
  | { kind: 'completed'; status: number; headers: Record<string, string>; body: string; interim: number[] }
  /** Some response bytes arrived (an interim response, or part of the final one), then the connection ended. */
  | { kind: 'cut-off'; code: string; received: string }
  /** Nothing conclusive within the bound. */
  | { kind: 'timeout'; received: string };

export interface RawRequestOptions {
  host: string;
  port: number;
  /** Bound on the whole exchange. */
  timeoutMs?: number;
  /** After a complete response without `Connection: close`, keep the socket open (as a keep-alive agent would) until the server closes it or `release()`. */
  keepOpen?: boolean;
}

export interface ParsedResponse {
  status: number;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** The status line and headers exactly as received (without the blank line). */
  head: string;
  body: string;
}

/** Parses what arrived so far: the interim statuses, and the final response once it is whole. */
export function parseResponses(data: Buffer): { interim: number[]; final?: ParsedResponse } {
  const interim: number[] = [];
  let offset = 0;
  for (let guard = 0; guard < 16; guard++) {
    const end = data.indexOf('\r\n\r\n', offset);
    if (end < 0) return { interim };
    const head = data.subarray(offset, end).toString('latin1');
    const lines = head.split('\r\n');
    const statusMatch = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (!statusMatch) throw new Error(`not an HTTP response: ${JSON.stringify(lines[0])}`);
    const status = Number(statusMatch[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const bodyStart = end + 4;
    if (status >= 100 && status < 200) {
      interim.push(status);
      offset = bodyStart;
      continue;
    }
    if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      const chunks: Buffer[] = [];
      let at = bodyStart;
      for (let c = 0; c < 100_000; c++) {
        const lineEnd = data.indexOf('\r\n', at);
        if (lineEnd < 0) return { interim };
        const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
        if (size === 0) {
          if (data.indexOf('\r\n', lineEnd + 2) < 0) return { interim };
          return { interim, final: { status, headers, head, body: Buffer.concat(chunks).toString('utf8') } };
        }
        if (data.length < lineEnd + 2 + size + 2) return { interim };
        chunks.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
      return { interim };
    }
    const length = Number(headers['content-length'] ?? '0');
    if (data.length - bodyStart < length) return { interim };
    return { interim, final: { status, headers, head, body: data.subarray(bodyStart, bodyStart + length).toString('utf8') } };
  }
  return { interim };
}

export class RawRequest {
  readonly outcome: Promise<Outcome>;
  /** Resolves once the TCP connection is up (rejects never; stays pending if it never is). */
  readonly connected: Promise<void>;
  /** Resolves when the first interim or final response starts arriving. */
  readonly firstResponseByte: Promise<void>;
  /** Interim statuses seen so far (100 Continue). */
  interim: number[] = [];
  /** Set when the server closed the connection after a complete response: ms after the response. */
  serverClosedAfterMs: number | undefined;
  private socket: Socket;
  private received = Buffer.alloc(0);
  private isConnected = false;
  private settled = false;
  private completedAt = 0;
  private errorCode: string | undefined;
  private timer: NodeJS.Timeout;
  private settle!: (outcome: Outcome) => void;
  private onConnected!: () => void;
  private onFirstByte!: () => void;

  constructor(
    first: Buffer | string,
    private readonly options: RawRequestOptions,
  ) {
    this.outcome = new Promise((resolve) => (this.settle = resolve));
    this.connected = new Promise((resolve) => (this.onConnected = resolve));
    this.firstResponseByte = new Promise((resolve) => (this.onFirstByte = resolve));
    this.timer = setTimeout(() => this.finish({ kind: 'timeout', received: this.received.toString('latin1') }), options.timeoutMs ?? 30_000);
    this.socket = connect({ host: options.host, port: options.port });
    this.socket.setNoDelay(true);
    this.socket.on('connect', () => {
      this.isConnected = true;
      this.onConnected();
    });
    // Queued until connected; written in one segment.
    this.socket.write(first);
    this.socket.on('data', (chunk: Buffer) => {
      if (this.received.length === 0) this.onFirstByte();
      this.received = Buffer.concat([this.received, chunk]);
      if (this.settled) return;
      let parsed: ReturnType<typeof parseResponses>;
      try {
        parsed = parseResponses(this.received);
      } catch {
        this.finish({ kind: 'cut-off', code: 'NOT_HTTP', received: this.received.toString('latin1') });
        return;
      }
      this.interim = parsed.interim;
      if (parsed.final) {
        this.completedAt = Date.now();
        this.finish({ kind: 'completed', ...parsed.final, interim: parsed.interim }, !this.options.keepOpen || parsed.final.headers.connection?.toLowerCase() === 'close');
      }
    });
    this.socket.on('error', (error: NodeJS.ErrnoException) => {
      this.errorCode ??= error.code ?? error.message;
    });
    this.socket.on('close', () => {
      if (this.settled) {
        if (this.completedAt && this.serverClosedAfterMs === undefined) this.serverClosedAfterMs = Date.now() - this.completedAt;
        return;
      }
      if (!this.isConnected) this.finish({ kind: 'refused', code: this.errorCode ?? 'CLOSED' });
      else if (this.received.length === 0) this.finish({ kind: 'closed-before-response', code: this.errorCode ?? 'EOF' });
      else this.finish({ kind: 'cut-off', code: this.errorCode ?? 'EOF', received: this.received.toString('latin1') });
    });
  }

  /** Writes more of the request (ignored once the connection is gone); resolves when flushed or failed. */
  write(part: Buffer | string): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.destroyed || this.socket.writableEnded) {
        resolve();
        return;
      }
      this.socket.write(part, () => resolve());
    });
  }

  /** Whether the outcome is already known (a whole final response, or the end of the connection). */
  isSettled(): boolean {
    return this.settled;
  }

  /** Closes the client side, whatever state it is in. */
  release(): void {
    this.socket.destroy();
  }

  private finish(outcome: Outcome, closeNow = true): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    if (closeNow || outcome.kind !== 'completed') this.socket.destroy();
    this.settle(outcome);
  }
}

/** The request line and headers of a request to `path`, ending with the blank line. */
export function requestHead(method: string, path: string, host: string, headers: Record<string, string>): string {
  return `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
}
