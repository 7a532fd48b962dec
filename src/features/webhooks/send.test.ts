/**
 * One delivery attempt against real receivers on 127.0.0.1: the status and Retry-After it
 * reports, and every way a receiver can fail it (no answer, a refused or reset connection, an
 * endless body, a redirect) ending as an outcome, promptly, with the socket closed. And the
 * connection goes to the pinned address, with the URL's name in Host and in TLS's SNI.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { parseRetryAfter, postEvent, type SendOutcome } from './send.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const running: Server[] = [];

afterEach(async () => {
  await Promise.all(
    running.splice(0).map((server) => {
      // Receivers that never answer hold their connections; the file leaves nothing open.
      server.closeAllConnections();
      return new Promise((closed) => server.close(closed));
    }),
  );
});

/** A receiver on 127.0.0.1 and an ephemeral port, closed after the test. */
async function receiver(handler: Handler): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  running.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port };
}

/** A target on 127.0.0.1, as resolveDeliveryAddress would give it for a local URL. */
const local = (url: string) => ({ url: new URL(url), address: '127.0.0.1', family: 4 as const });

const event = { body: JSON.stringify({ type: 'pet.created', data: { id: 7 } }), headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': 'v1,abc=' } };

const answering = (status: number, headers: Record<string, string> = {}): Handler => (_request, response) => {
  response.writeHead(status, headers).end();
};

/** Resolves when the receiver's side of a connection closes: how a test sees the sender hang up. */
const closedOnServer = (socket: Socket): Promise<void> => new Promise((closed) => socket.once('close', () => closed()));

describe('postEvent', () => {
  it('POSTs the body with its headers and reports a 2xx', async () => {
    let seen: { method: string | undefined; url: string | undefined; headers: IncomingMessage['headers']; body: string } | undefined;
    const { port } = await receiver((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        seen = { method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
        response.writeHead(204).end();
      });
    });

    const outcome = await postEvent(local(`http://127.0.0.1:${port}/hooks?tenant=4`), event);

    expect(outcome).toEqual({ status: 204, retryAfterMs: undefined, error: undefined });
    expect(seen?.method).toBe('POST');
    expect(seen?.url).toBe('/hooks?tenant=4');
    expect(seen?.body).toBe(event.body);
    expect(seen?.headers).toMatchObject({
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(event.body)),
      'user-agent': 'animal-store-webhooks/1',
      'webhook-id': 'msg_1',
      'webhook-timestamp': '1700000000',
      'webhook-signature': 'v1,abc=',
    });
  });

  it('counts the body in bytes, not characters', async () => {
    let length: string | undefined;
    const { port } = await receiver((request, response) => {
      length = request.headers['content-length'];
      request.resume().on('end', () => response.writeHead(200).end());
    });
    const body = JSON.stringify({ name: 'Grün 🐈' });
    expect((await postEvent(local(`http://127.0.0.1:${port}/`), { body, headers: {} })).status).toBe(200);
    expect(length).toBe(String(Buffer.byteLength(body)));
    expect(Number(length)).toBeGreaterThan(body.length);
  });

  it.each([500, 410, 429, 400])('reports a %i as its status', async (status) => {
    const { port } = await receiver(answering(status));
    expect(await postEvent(local(`http://127.0.0.1:${port}/`), event)).toEqual({ status, retryAfterMs: undefined, error: undefined });
  });

  it('reads Retry-After in seconds', async () => {
    const { port } = await receiver(answering(503, { 'retry-after': '120' }));
    expect(await postEvent(local(`http://127.0.0.1:${port}/`), event)).toEqual({ status: 503, retryAfterMs: 120_000, error: undefined });
  });

  it('reads Retry-After as an HTTP date', async () => {
    const { port } = await receiver(answering(429, { 'retry-after': new Date(Date.now() + 60_000).toUTCString() }));
    const outcome = await postEvent(local(`http://127.0.0.1:${port}/`), event);
    expect(outcome.status).toBe(429);
    // The date has whole seconds, and some time passed on the way.
    expect(outcome.retryAfterMs).toBeGreaterThan(30_000);
    expect(outcome.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('leaves out a Retry-After it cannot read', async () => {
    const { port } = await receiver(answering(503, { 'retry-after': 'soon' }));
    expect(await postEvent(local(`http://127.0.0.1:${port}/`), event)).toEqual({ status: 503, retryAfterMs: undefined, error: undefined });
  });

  it('returns a 302 as its status without following it', async () => {
    const paths: string[] = [];
    const { port } = await receiver((request, response) => {
      paths.push(request.url ?? '');
      if (request.url === '/hooks') response.writeHead(302, { location: `http://127.0.0.1:${port}/elsewhere` }).end();
      else response.writeHead(200).end();
    });
    expect(await postEvent(local(`http://127.0.0.1:${port}/hooks`), event)).toEqual({ status: 302, retryAfterMs: undefined, error: undefined });
    expect(paths).toEqual(['/hooks']);
  });

  it('connects to the pinned address, with the URL’s name and port in Host', async () => {
    let host: string | undefined;
    const { port } = await receiver((request, response) => {
      host = request.headers.host;
      response.writeHead(202).end();
    });
    // `.invalid` never resolves: only the pin can reach the receiver.
    const outcome = await postEvent({ url: new URL(`http://example.invalid:${port}/hooks`), address: '127.0.0.1', family: 4 }, event);
    expect(outcome).toEqual({ status: 202, retryAfterMs: undefined, error: undefined });
    expect(host).toBe(`example.invalid:${port}`);
  });

  it("sends the URL's name as TLS's server name while connecting to the pinned address", async () => {
    const names: string[] = [];
    // No certificate: the handshake stops once the name is seen, which is all this needs.
    const tls = createTlsServer({
      SNICallback: (name, done) => {
        names.push(name);
        done(new Error('no certificate here'), undefined);
      },
    });
    tls.listen(0, '127.0.0.1');
    await once(tls, 'listening');
    try {
      const { port } = tls.address() as AddressInfo;
      const outcome = await postEvent({ url: new URL(`https://hooks.example.invalid:${port}/in?key=s3cret`), address: '127.0.0.1', family: 4 }, event, { timeoutMs: 10_000 });
      expect(names).toEqual(['hooks.example.invalid']);
      expect(outcome.status).toBeUndefined();
      expect(outcome.error).toMatch(/^[A-Z_]+$/);
    } finally {
      await new Promise((closed) => tls.close(closed));
    }
  });

  it('gives up on a receiver that never answers, and hangs up', async () => {
    const sockets: Socket[] = [];
    const { port } = await receiver((request) => {
      sockets.push(request.socket);
    });
    const outcome = await postEvent(local(`http://127.0.0.1:${port}/`), event, { timeoutMs: 300 });
    expect(outcome).toEqual({ status: undefined, retryAfterMs: undefined, error: 'timed out after 0.3 s' });
    expect(sockets).toHaveLength(1);
    await closedOnServer(sockets[0]!);
  });

  it('reports a refused connection by its code, and nothing of the URL', async () => {
    const { server, port } = await receiver(answering(200));
    await new Promise((closed) => server.close(closed));
    const outcome = await postEvent(local(`http://user:hunter2@127.0.0.1:${port}/in?key=s3cret`), event);
    expect(outcome).toEqual({ status: undefined, retryAfterMs: undefined, error: 'ECONNREFUSED' });
  });

  it('reports a connection reset before the answer by its code', async () => {
    const { port } = await receiver((request) => request.socket.destroy());
    expect(await postEvent(local(`http://127.0.0.1:${port}/`), event)).toEqual({ status: undefined, retryAfterMs: undefined, error: 'ECONNRESET' });
  });

  it('reports a header node refuses to send as an outcome, not a throw', async () => {
    const { port } = await receiver(answering(200));
    const outcome: SendOutcome = await postEvent(local(`http://127.0.0.1:${port}/`), { body: '{}', headers: { 'webhook-id': 'msg\r\nx-injected: 1' } });
    expect(outcome).toEqual({ status: undefined, retryAfterMs: undefined, error: 'ERR_INVALID_CHAR' });
  });

  it('stops reading an endless body at the bound, reports the status, and hangs up', async () => {
    let hungUp: Promise<void> | undefined;
    const { port } = await receiver((request, response) => {
      hungUp = closedOnServer(request.socket);
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(16_384, 'x');
      const pour = (): void => {
        while (!response.destroyed && response.write(chunk));
      };
      response.on('drain', pour);
      pour();
    });
    const outcome = await postEvent(local(`http://127.0.0.1:${port}/`), event, { timeoutMs: 20_000, maxResponseBytes: 100_000 });
    expect(outcome).toEqual({ status: 200, retryAfterMs: undefined, error: undefined });
    await hungUp;
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');

  it.each<[string | undefined, number | undefined]>([
    ['0', 0],
    ['7', 7_000],
    [' 30 ', 30_000],
    ['Sun, 01 Mar 2026 12:01:30 GMT', 90_000],
    ['Sunday, 01-Mar-26 12:01:30 GMT', 90_000],
    ['Sun, 01 Mar 2026 11:00:00 GMT', 0],
    [undefined, undefined],
    ['', undefined],
    ['-5', undefined],
    ['1.5', undefined],
    ['soon', undefined],
    ['Sun, 99 Foo 2026', undefined],
    ['9'.repeat(400), undefined],
  ])('reads %j as %j ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});
