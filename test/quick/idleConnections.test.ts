/**
 * Idle connections cannot starve the server (src/transport/listen.ts, src/transport/connections.ts), on a
 * real port over raw sockets: a connection that completes no request head within the headers
 * timeout from its accept is closed (node:http's own scan, at listen.ts's interval, answering 408);
 * at the connection bound a new connection displaces the oldest one that never sent a
 * request, then the oldest answered one, and never one whose request is being answered.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

const HEADERS_TIMEOUT_MS = 1_000;
const BOUND = 4;
/** node:http scans every quarter of the headers timeout (src/transport/listen.ts); a loaded machine adds its own delay. */
const SLACK_MS = 1_500;

let t: TestServer;
const sockets: Socket[] = [];

beforeAll(async () => {
  t = await startTestServer('sqlite', { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: 5_000, maxConnections: BOUND });
}, 60_000);
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
});
afterAll(async () => {
  await t?.close();
});

interface Client {
  socket: Socket;
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>;
  isClosed(): boolean;
  /** Everything the server sent so far. */
  received(): string;
}

/** A TCP connection to the server, connected, that sends nothing until told. */
async function open(): Promise<Client> {
  const { hostname, port } = new URL(t.origin);
  const socket = connect({ host: hostname, port: Number(port) });
  sockets.push(socket);
  let data = '';
  let done = false;
  socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => ((done = true), resolve())));
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return { socket, closed, isClosed: () => done, received: () => data };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds, up to `ms`. */
async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await sleep(20);
  return check();
}

function listRequest(): string {
  return `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${t.key}\r\n\r\n`;
}

describe('idle connections', () => {
  it('a connection that sends nothing is closed once the headers timeout has passed since its accept; one that was answered stays', async () => {
    const began = Date.now();
    const silent = await open();
    const answered = await open();
    answered.socket.write(listRequest());
    expect(await until(() => answered.received().includes('\r\n\r\n'), 5_000)).toBe(true);
    await silent.closed;
    const after = Date.now() - began;
    expect(after).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    expect(after).toBeLessThan(HEADERS_TIMEOUT_MS + SLACK_MS);
    expect(silent.received()).toMatch(/^(HTTP\/1\.1 408 |$)/);
    // Keep-alive (5 s) still holds the answered one.
    expect(answered.isClosed()).toBe(false);
  });

  it('at the bound, a new connection displaces the oldest that never sent a request, before an older answered one', async () => {
    const answered = await open();
    answered.socket.write(listRequest());
    expect(await until(() => answered.received().includes('\r\n\r\n'), 5_000)).toBe(true);
    const silent = [await open(), await open(), await open()];
    const newcomer = await open();
    expect(await until(() => silent[0]!.isClosed(), 2_000)).toBe(true);
    expect(silent[1]!.isClosed() || silent[2]!.isClosed() || answered.isClosed() || newcomer.isClosed()).toBe(false);
    // The newcomer is served.
    newcomer.socket.write(listRequest());
    expect(await until(() => newcomer.received().startsWith('HTTP/1.1 200'), 5_000)).toBe(true);
    // With no silent connection left but the newest, the oldest answered one goes next.
    silent[1]!.socket.destroy();
    silent[2]!.socket.destroy();
    const others = [await open(), await open()];
    for (const other of others) {
      other.socket.write(listRequest());
      expect(await until(() => other.received().includes('\r\n\r\n'), 5_000)).toBe(true);
    }
    const last = await open();
    expect(await until(() => answered.isClosed(), 2_000)).toBe(true);
    expect([newcomer, ...others, last].some((c) => c.isClosed())).toBe(false);
  });

  it('a connection whose request is being answered is never displaced: its create completes', async () => {
    const body = JSON.stringify({ name: 'Patience', categoryId: 1 });
    const busy = await open();
    busy.socket.write(`POST /v1/pets HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${t.key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 5)}`);
    await sleep(200);
    const crowd: Client[] = [];
    for (let i = 0; i < BOUND * 2; i++) crowd.push(await open());
    await sleep(200);
    expect(busy.isClosed()).toBe(false);
    // Never more open than the bound: the crowd displaced its own oldest, then was refused.
    expect(crowd.filter((c) => !c.isClosed()).length).toBeLessThanOrEqual(BOUND - 1);
    busy.socket.write(body.slice(5));
    expect(await until(() => busy.received().startsWith('HTTP/1.1 201'), 5_000)).toBe(true);
  });
});
