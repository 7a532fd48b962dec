/**
 * What the robust upload proofs share: whether the bundled contract has an operation yet (so the
 * photo proofs start running on their own once contract 1.3.0's operations land), real image bytes
 * of any size, multipart bodies written byte by byte (well-formed or not), a client that sends and
 * reads bytes (not text), the server's resident memory read from /proc, and a client that sends a
 * body over a raw socket until the server answers or cuts it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type Agent, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { root } from '../../../scripts/lib/bundle.js';

/** Whether the bundled contract (generated/openapi.json, as the server serves it) has an operation with this id. */
export function specHasOperation(operationId: string, specPath = join(root, 'generated', 'openapi.json')): boolean {
  const document = JSON.parse(readFileSync(specPath, 'utf8')) as { paths?: Record<string, Record<string, { operationId?: unknown } | undefined>> };
  return Object.values(document.paths ?? {}).some((item) => Object.values(item).some((op) => typeof op === 'object' && op !== null && op.operationId === operationId));
}

/** The operations the photo proofs need, and why they skip while any is missing. */
export function photoOperationsMissing(): string | undefined {
  const missing = ['putPetPhoto', 'getPetPhoto'].filter((id) => !specHasOperation(id));
  return missing.length === 0 ? undefined : `the contract has no ${missing.join(' or ')} yet (contract 1.3.0)`;
}

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

export { png, PNG_SIGNATURE } from '../../../scripts/lib/png.js';

export interface Part {
  /** Omitted: a part without a name. */
  name?: string;
  fileName?: string;
  type?: string;
  value: string | Buffer;
  /** Header lines written as they are (a broken one, say), after Content-Disposition and Content-Type. */
  extraHeaders?: string[];
}

/** A multipart/form-data body, byte by byte as a browser writes one (CRLF, closing boundary), unless `close` is false. */
export function multipartBody(parts: readonly Part[], boundary: string, close = true): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data${part.name === undefined ? '' : `; name="${part.name}"`}${part.fileName === undefined ? '' : `; filename="${part.fileName}"`}`;
    const lines = [`Content-Disposition: ${disposition}`, ...(part.type ? [`Content-Type: ${part.type}`] : []), ...(part.extraHeaders ?? [])];
    chunks.push(Buffer.from(`--${boundary}\r\n${lines.join('\r\n')}\r\n\r\n`, 'latin1'), Buffer.from(part.value), Buffer.from('\r\n'));
  }
  if (close) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

export interface BytesResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface BytesRequest {
  method?: string;
  key?: string;
  body?: Buffer;
  headers?: Record<string, string>;
  agent?: Agent;
  timeoutMs?: number;
}

/** One request whose body and answer are bytes; rejects with the socket error's code (`.code`) when no whole answer arrives. */
export function sendBytes(url: string, options: BytesRequest = {}): Promise<BytesResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.body) headers['content-length'] = String(options.body.length);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers, agent: options.agent ?? false, timeout: options.timeoutMs ?? 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (data: Buffer) => chunks.push(data));
      res.on('end', () => (res.complete ? resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }) : reject(Object.assign(new Error(`the answer from ${url} ended early`), { code: 'INCOMPLETE' }))));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer from ${url} within the timeout`), { code: 'TIMEOUT' })));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The resident set of a process, from /proc (Linux). */
export function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

export const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

/** Samples a process's RSS every `everyMs` until stopped: the highest seen, and the last. */
export function sampleRss(pid: number, everyMs = 20): { stop(): { peak: number; last: number } } {
  let peak = rssBytes(pid);
  let last = peak;
  const timer = setInterval(() => {
    try {
      last = rssBytes(pid);
      peak = Math.max(peak, last);
    } catch {
      // the process is gone: the liveness checks say so
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return { peak, last };
    },
  };
}

export interface Flood {
  /** Everything the server sent, as latin1 text. */
  answer: string;
  /** Body bytes handed to the socket before the server answered, and in all. */
  sentBeforeAnswer: number | undefined;
  sent: number;
  answeredAfterMs: number | undefined;
  /** ms after the start when the connection ended (the server cut it), or undefined when the client gave up first. */
  closedAfterMs: number | undefined;
  errorCode: string | undefined;
}

/**
 * Writes `head`, then `chunk` over and over as fast as the socket takes it, reading while it
 * sends, as a client that means to read its answer does: it stops sending once the answer begins,
 * `most` bytes are sent, or the server cuts the connection, and waits for the end of the
 * connection up to `withinMs`. With `whole`, it is a client that sends its whole body whatever
 * comes back (many do: they read only once they have sent): it keeps sending past the answer and
 * past the server's half-close (its socket allows half-open), exactly `most` bytes, then ends its
 * side and waits for the end; `sent` then counts only bytes the kernel took.
 */
export function flood(host: string, port: number, head: string | Buffer, chunk: Buffer, most: number, withinMs = 30_000, whole = false): Promise<Flood> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket: Socket = connect({ host, port, allowHalfOpen: whole });
    const received: Buffer[] = [];
    const result: Flood = { answer: '', sentBeforeAnswer: undefined, sent: 0, answeredAfterMs: undefined, closedAfterMs: undefined, errorCode: undefined };
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (closed) result.closedAfterMs = Date.now() - started;
      result.answer = Buffer.concat(received).toString('latin1');
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish(false), withinMs);
    socket.on('data', (data: Buffer) => {
      if (result.answeredAfterMs === undefined) {
        result.answeredAfterMs = Date.now() - started;
        result.sentBeforeAnswer = result.sent;
      }
      received.push(data);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => (result.errorCode ??= error.code ?? error.message));
    socket.on('close', () => finish(true));
    // One chunk at a time, each once the last is in the kernel's hands, with a turn of the event
    // loop between them: whatever the server answers is read before the next write.
    const pump = () => {
      if (done || (!whole && result.answeredAfterMs !== undefined)) return; // then: wait for the end of the connection (or the timer)
      if (result.sent >= most) {
        if (whole) socket.end();
        return;
      }
      const piece = whole && most - result.sent < chunk.length ? chunk.subarray(0, most - result.sent) : chunk;
      if (!whole) result.sent += piece.length;
      socket.write(piece, (error) => {
        if (error) return;
        if (whole) result.sent += piece.length;
        setImmediate(pump);
      });
    };
    socket.write(head, pump);
  });
}

/** The status of the first response in `answer` (raw bytes as latin1), or undefined. */
export const statusOf = (answer: string): number | undefined => {
  const match = /^HTTP\/1\.1 (\d{3}) /.exec(answer);
  return match ? Number(match[1]) : undefined;
};

/** The JSON body of the first response in `answer`, when it has a Content-Length and is whole. */
export function jsonBodyOf(answer: string): unknown {
  const split = answer.indexOf('\r\n\r\n');
  if (split === -1) return undefined;
  const length = /\r\ncontent-length: (\d+)\r\n/i.exec(answer.slice(0, split + 2))?.[1];
  if (length === undefined) return undefined;
  const body = answer.slice(split + 4, split + 4 + Number(length));
  if (Buffer.byteLength(body, 'latin1') < Number(length)) return undefined;
  try {
    return JSON.parse(Buffer.from(body, 'latin1').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Whether `body` is the contract's Error for `status`: `{ status, code, message }` and at most `details`. */
export function isErrorBody(body: unknown, status: number): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const error = body as Record<string, unknown>;
  return error.status === status && typeof error.code === 'string' && typeof error.message === 'string' && Object.keys(error).every((k) => ['status', 'code', 'message', 'details'].includes(k));
}

export interface Streamed {
  status: number | undefined;
  /** The answer's body, when it arrived whole (`complete`). */
  body: Buffer;
  complete: boolean;
  /** Body bytes handed to node:http when the answer's head arrived, and in all. */
  sentBeforeAnswer: number | undefined;
  sent: number;
  answeredAfterMs: number | undefined;
  endedAfterMs: number;
  /** The first error node:http reported (ECONNRESET, EPIPE, `TIMEOUT` for none within the bound), if any. */
  errorCode: string | undefined;
  /** Whether that error came before the answer was whole: the client lost its answer to it. */
  errorBeforeAnswer: boolean;
}

/**
 * node:http's own client streaming a body of exactly `length` bytes with that Content-Length:
 * `chunk` over and over (never more of the body in memory than that), as fast as the socket takes
 * it (its backpressure), reading the answer while it sends as node:http does. It stops sending
 * when node:http stops (an answer that ended and a server that closed its side end the request);
 * resolves once the answer is whole, the request failed, or `withinMs` passed.
 */
export function streamBody(url: string, options: { method: string; key: string; contentType: string; length: number; chunk: Buffer; withinMs?: number }): Promise<Streamed> {
  const { length, chunk } = options;
  return new Promise((resolve) => {
    const started = Date.now();
    const result: Streamed = { status: undefined, body: Buffer.alloc(0), complete: false, sentBeforeAnswer: undefined, sent: 0, answeredAfterMs: undefined, endedAfterMs: 0, errorCode: undefined, errorBeforeAnswer: false };
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      result.endedAfterMs = Date.now() - started;
      req.destroy();
      resolve(result);
    };
    const failed = (error: NodeJS.ErrnoException) => {
      if (result.errorCode === undefined) {
        result.errorCode = error.code ?? error.message;
        result.errorBeforeAnswer = !result.complete;
      }
      finish();
    };
    const timer = setTimeout(() => failed(Object.assign(new Error('no whole answer within the bound'), { code: 'TIMEOUT' })), options.withinMs ?? 120_000);
    const headers = { authorization: `Bearer ${options.key}`, 'content-type': options.contentType, 'content-length': String(length) };
    const req = httpRequest(url, { method: options.method, headers, agent: false }, (res) => {
      result.status = res.statusCode;
      result.answeredAfterMs = Date.now() - started;
      result.sentBeforeAnswer = result.sent;
      const chunks: Buffer[] = [];
      res.on('data', (data: Buffer) => chunks.push(data));
      res.on('end', () => {
        result.complete = res.complete;
        result.body = Buffer.concat(chunks);
        finish();
      });
      res.on('error', failed);
    });
    req.on('error', failed);
    const pump = (): void => {
      while (!settled && !req.destroyed && result.sent < length) {
        const piece = length - result.sent < chunk.length ? chunk.subarray(0, length - result.sent) : chunk;
        result.sent += piece.length;
        if (!req.write(piece)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!settled && !req.destroyed) req.end();
    };
    pump();
  });
}
