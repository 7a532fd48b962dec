/**
 * HTTP at the edges, as clients and tools nobody here wrote meet it: HEAD on every GET operation
 * (RFC 9110 §9.3.2), a singleton `Authorization` field sent twice, and a trailing slash. On the
 * real server over raw HTTP (fetch would merge or refuse some of these itself).
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { declares, specOperations } from '../support/specOperations.js';

let t: TestServer;
let petId: number;
beforeAll(async () => {
  t = await startTestServer('sqlite');
  const created = await t.request('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Biscuit', categoryId: 2 }) });
  petId = ((await created.json()) as { id: number }).id;
}, 60_000);
afterAll(async () => {
  expect(t.server.violations).toEqual([]);
  await t.close();
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with headers exactly as given (a name may repeat), over its own connection. */
function raw(method: string, path: string, headers: Array<[string, string]>): Promise<Raw> {
  const url = new URL(`${t.api}${path}`);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path: `${url.pathname}${url.search}`, headers: [['Host', url.host], ...headers].flat(), agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

const auth = (): [string, string] => ['Authorization', `Bearer ${t.key}`];

describe('HEAD on every GET operation', () => {
  // Inputs and expectations from the spec alone, so an operation added later (its stub's 501
  // included) is checked the same way with no edit here.
  const gets = specOperations().filter((op) => op.method === 'get');

  it.each(gets.map((op) => [op.operationId, op] as const))("%s: the GET's status and headers (ETag, Link, Deprecation…, Content-Length), no body; a 304 and a 401 where the spec declares them", async (operationId, op) => {
    const get = await raw('GET', op.path, [auth()]);
    const head = await raw('HEAD', op.path, [auth()]);
    // A 2xx, a 4xx the spec declares for it (its example id may name nothing), or a stub's 501: never a failure.
    const acceptable = (get.status >= 200 && get.status < 300) || (get.status >= 400 && get.status < 500) || get.status === 501;
    expect(acceptable && declares(op, get.status), `${operationId} GET ${op.path} answered ${get.status}: ${get.body.slice(0, 300)}`).toBe(true);
    expect(head.status).toBe(get.status);
    expect(head.body).toBe('');
    for (const name of ['etag', 'link', 'deprecation', 'sunset', 'content-type', 'content-length', 'cache-control']) expect(head.headers[name], name).toEqual(get.headers[name]);
    // Conditional where the spec declares a 304 and the 200's ETag.
    if (get.status === 200 && op.statuses.includes('304') && op.headers['200']?.includes('etag')) {
      expect((await raw('HEAD', op.path, [auth(), ['If-None-Match', String(get.headers.etag)]])).status).toBe(304);
    }
    if (op.secured) expect((await raw('HEAD', op.path, [])).status).toBe(401);
  });

  it('covers the operations the pet store answers 200, with their 304', async () => {
    // The walk above must not pass by every operation failing alike: the known ones succeed.
    expect(gets.map((op) => op.operationId)).toEqual(expect.arrayContaining(['listPets', 'getPet']));
    const getPet = gets.find((op) => op.operationId === 'getPet');
    expect((await raw('GET', getPet?.path ?? '', [auth()])).status).toBe(200);
    expect(petId).toBeGreaterThan(0);
  });

  it('Allow lists HEAD wherever GET is', async () => {
    const refused = await raw('PUT', '/pets', [auth()]);
    expect(refused.status).toBe(405);
    expect(String(refused.headers.allow).split(', ')).toEqual(expect.arrayContaining(['GET', 'HEAD']));
  });
});

describe('Authorization sent twice', () => {
  it.each([
    ['valid, then bad', (key: string) => [`Bearer ${key}`, 'Bearer ask_not-a-key']],
    ['bad, then valid', (key: string) => ['Bearer ask_not-a-key', `Bearer ${key}`]],
    ['valid twice', (key: string) => [`Bearer ${key}`, `Bearer ${key}`]],
  ] as const)('%s: 400 naming the header, whatever the order', async (_case, values) => {
    const [first, second] = values(t.key) as [string, string];
    const response = await raw('GET', '/pets', [['Authorization', first], ['authorization', second]]);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toEqual({
      code: 'validation_failed',
      status: 400,
      message: expect.stringContaining('Authorization'),
      details: [{ in: 'header', field: 'Authorization', message: 'must be sent once' }],
    });
  });
});

describe('a trailing slash', () => {
  it.each(['/pets/', '/pets/1/', '/', '/pets/?limit=1'])('%s: 404 like any unknown path, naming the address without it', async (path) => {
    const response = await raw('GET', path.replace('/1/', `/${petId}/`), [auth()]);
    expect(response.status).toBe(404);
    const body = JSON.parse(response.body) as { code: string; message: string };
    expect(body.code).toBe('not_found');
    expect(body.message).toMatch(/no trailing slash: \/v1/);
  });
});

describe('what a browser page and a client library read in a refusal', () => {
  it('node:http\'s own refusals (431, 400) carry the CORS headers for an allowed origin, and none for another', async () => {
    const cors = await startTestServer('sqlite', { env: { CORS_ORIGINS: 'https://app.example' } });
    try {
      const url = new URL(cors.api);
      const send = (origin: string, extra: string): Promise<string> =>
        new Promise((resolve, reject) => {
          const socket = connect(Number(url.port), url.hostname, () => socket.end(`GET /v1/pets HTTP/1.1\r\nHost: ${url.host}\r\nOrigin: ${origin}\r\n${extra}\r\n`));
          const chunks: Buffer[] = [];
          socket.on('data', (chunk: Buffer) => chunks.push(chunk));
          socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
          socket.on('error', reject);
        });
      const big = `X-Padding: ${'a'.repeat(20_000)}\r\n`;
      const tooLarge = await send('https://app.example', big);
      expect(tooLarge).toMatch(/^HTTP\/1\.1 431 /);
      expect(tooLarge).toMatch(/\r\nAccess-Control-Allow-Origin: https:\/\/app\.example\r\n/);
      expect(tooLarge).toMatch(/\r\nAccess-Control-Expose-Headers: [^\r]*X-Request-Id/);
      const malformed = await send('https://app.example', 'no colon here\r\n');
      expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
      expect(malformed).toContain('Access-Control-Allow-Origin: https://app.example');
      expect(await send('https://evil.example', big)).not.toContain('Access-Control-Allow-Origin');
    } finally {
      await cors.close();
    }
  });

  it('400 details name a header parameter as the spec spells it (Idempotency-Key, not idempotency-key)', async () => {
    const response = await t.request('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'x'.repeat(300) }, body: JSON.stringify({ name: 'Biscuit', categoryId: 2 }) });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { message: string; details: Array<{ in: string; field: string }> };
    expect(body.details).toContainEqual(expect.objectContaining({ in: 'header', field: 'Idempotency-Key' }));
    expect(body.message).toContain('"Idempotency-Key"');
  });
});
