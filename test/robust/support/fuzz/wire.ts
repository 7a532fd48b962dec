/**
 * Sends one fuzzed request exactly as described: method, request target, headers in order (a name
 * may repeat), body bytes. Ordinary requests go over a keep-alive node:http agent; requests that
 * node:http refuses to write (control bytes in a header, raw non-ASCII in the target, a duplicated
 * Content-Length) go byte for byte over a fresh socket through rawHttp.ts.
 */
import { Agent, request as httpRequest } from 'node:http';
import { RawRequest } from '../rawHttp.js';

export interface WireRequest {
  method: string;
  /** Path and query as they go on the request line: `/v1/pets?limit=1`. */
  target: string;
  headers: ReadonlyArray<readonly [string, string]>;
  body?: Buffer;
  /** `raw` writes `rawBytes` (the whole request) over a new TCP connection. */
  transport: 'http' | 'raw';
  rawBytes?: Buffer;
}

export interface WireResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

export class TransportFailure extends Error {}

const TIMEOUT_MS = 20_000;

export class Wire {
  private readonly agent: Agent;

  constructor(
    readonly host: string,
    readonly port: number,
    maxSockets: number,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets });
  }

  send(request: WireRequest): Promise<WireResponse> {
    return request.transport === 'raw' ? this.sendRaw(request) : this.sendHttp(request);
  }

  close(): void {
    this.agent.destroy();
  }

  private sendHttp(request: WireRequest): Promise<WireResponse> {
    const names = new Set(request.headers.map(([name]) => name.toLowerCase()));
    const flat: string[] = ['Host', `${this.host}:${this.port}`];
    for (const [name, value] of request.headers) flat.push(name, value);
    // node:http sends a GET body with neither Content-Length nor chunked framing unless told:
    // the server would read it as the next request. Frame every body explicitly.
    if (request.body && !names.has('content-length') && !names.has('transfer-encoding')) flat.push('Content-Length', String(request.body.length));
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: this.host, port: this.port, method: request.method, path: request.target, headers: flat, agent: this.agent, timeout: TIMEOUT_MS }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          if (!res.complete) {
            reject(new TransportFailure(`${request.method} ${request.target}: the response ended early`));
            return;
          }
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
          resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks) });
        });
        res.on('error', (error) => reject(new TransportFailure(`${request.method} ${request.target}: ${error.message}`)));
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      req.on('error', (error: NodeJS.ErrnoException) => reject(new TransportFailure(`${request.method} ${request.target}: ${error.code ?? ''} ${error.message}`)));
      req.end(request.body);
    });
  }

  private async sendRaw(request: WireRequest): Promise<WireResponse> {
    if (!request.rawBytes) throw new Error('a raw request needs rawBytes');
    const raw = new RawRequest(request.rawBytes, { host: this.host, port: this.port, timeoutMs: TIMEOUT_MS });
    const outcome = await raw.outcome;
    raw.release();
    if (outcome.kind !== 'completed') throw new TransportFailure(`raw ${JSON.stringify(request.rawBytes.subarray(0, 80).toString('latin1'))}: ${JSON.stringify(outcome).slice(0, 300)}`);
    return { status: outcome.status, headers: outcome.headers, body: Buffer.from(outcome.body, 'utf8') };
  }
}

/** The bytes of a whole HTTP/1.1 request, for the raw transport. */
export function rawRequestBytes(method: string, target: Buffer | string, host: string, headers: ReadonlyArray<readonly [string, Buffer | string]>, body?: Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from(`${method} `, 'latin1'), typeof target === 'string' ? Buffer.from(target, 'latin1') : target, Buffer.from(` HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n`, 'latin1')];
  for (const [name, value] of headers) parts.push(Buffer.from(`${name}: `, 'latin1'), typeof value === 'string' ? Buffer.from(value, 'latin1') : value, Buffer.from('\r\n', 'latin1'));
  parts.push(Buffer.from('\r\n', 'latin1'));
  if (body) parts.push(body);
  return Buffer.concat(parts);
}
