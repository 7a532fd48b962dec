/**
 * A refused request must not break the client's next one. Through one connection of undici's pool
 * (Node's fetch, as most Node clients), each sequence is a refused request with a body the server does
 * not read (or headers it will not read), then a list, then a create: a connection the server
 * answered as reusable but then cut, or reused with unread bytes in it, makes the next request on
 * it die with a socket error before it reaches the server. A create is retried by no client, so
 * such a failure is an animal silently not stored. Every request of every sequence must be answered.
 */
import { Agent, fetch, type RequestInit, type Response } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

const SEQUENCES = 100;

let t: TestServer;
// One connection: every request of a sequence goes over the connection the one before it used.
const pool = new Agent({ connections: 1 });
beforeAll(async () => {
  t = await startTestServer('sqlite');
}, 60_000);
afterAll(async () => {
  await pool.close();
  await t?.close();
});

/** A request under the API through the one-connection pool, with the test key unless `key` says otherwise. */
function send(path: string, init: RequestInit, key = t.key): Promise<Response> {
  return fetch(`${t.api}${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) }, dispatcher: pool });
}

interface Refused {
  what: string;
  status: number;
  /** A fresh request each time (a stream body is read once). */
  init: () => RequestInit & { key?: string };
}

const JSON_TYPE = { 'Content-Type': 'application/json' };
const MEGABYTE = Buffer.alloc(1_000_000, 0x20);
const TWO_MEGABYTES = Buffer.alloc(2_000_000, 0x20);

/** 2 MB in 64 KiB chunks, with no Content-Length (Transfer-Encoding: chunked). */
async function* chunked(): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < 32; i++) yield TWO_MEGABYTES.subarray(0, 64 * 1024);
}

const CASES: Refused[] = [
  { what: '413: a 1 MB create', status: 413, init: () => ({ method: 'POST', headers: JSON_TYPE, body: MEGABYTE }) },
  { what: '413: a 2 MB create (more than the server drains)', status: 413, init: () => ({ method: 'POST', headers: JSON_TYPE, body: TWO_MEGABYTES }) },
  { what: '413: a 2 MB create sent chunked', status: 413, init: () => ({ method: 'POST', headers: JSON_TYPE, body: chunked(), duplex: 'half' }) },
  { what: '415: a 1 MB create as text/plain', status: 415, init: () => ({ method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: MEGABYTE }) },
  { what: '401: a 1 MB create with a bad key', status: 401, init: () => ({ method: 'POST', headers: JSON_TYPE, body: MEGABYTE, key: 'not-a-key' }) },
  { what: '431: 20 KB of headers', status: 431, init: () => ({ headers: { 'X-Padding': 'a'.repeat(20_000) } }) },
];

describe('a refused request leaves the connection pool usable', () => {
  it.each(CASES)('$what, then a list and a create, 100 times: every request answered', async ({ status, init }) => {
    const failures: string[] = [];
    const statuses = new Map<string, number>();
    const count = (label: string): void => void statuses.set(label, (statuses.get(label) ?? 0) + 1);
    for (let i = 0; i < SEQUENCES; i++) {
      const steps: Array<[string, () => Promise<Response>]> = [
        ['refused', () => {
          const refused = init();
          return send('/pets', refused, refused.key);
        }],
        ['list', () => send('/pets?limit=1', {})],
        ['create', () => send('/pets', { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({ name: `Pool ${i}`, categoryId: 1 }) })],
      ];
      for (const [label, send] of steps) {
        try {
          const response = await send();
          await response.arrayBuffer();
          count(`${label} ${response.status}`);
        } catch (error) {
          const cause = (error as { cause?: { code?: string } }).cause;
          failures.push(`sequence ${i + 1}, ${label}: ${cause?.code ?? String(error)}`);
        }
      }
    }
    expect(failures, failures.slice(0, 10).join('\n')).toEqual([]);
    expect(Object.fromEntries(statuses)).toEqual({ [`refused ${status}`]: SEQUENCES, 'list 200': SEQUENCES, 'create 201': SEQUENCES });
  }, 120_000);
});
