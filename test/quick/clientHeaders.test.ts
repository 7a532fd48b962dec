/**
 * The parsed response headers of the typed client's per-operation methods (`res.headers`):
 *
 * - against the real server: each value as the server sent it, parsed (etag, nextCursor across
 *   pages, a 304, replayed on an idempotent retry, sunset and deprecation on getPet and only where
 *   the spec declares them, rateLimit and rateLimitPolicy with rate limits on, retryAfter on a 429),
 *   and the same from a page on another origin in headless Chromium, where CORS decides what is read;
 * - the parsers alone: the shapes the spec's patterns allow, the robustness the RFCs ask of a
 *   recipient, and never a throw, whatever the text;
 * - the generator: a header added to the spec gets a property and a kind (on a copy of the
 *   project: test/loop/clientHeadersLoop.test.ts, in `npm run test:loop`);
 * - the compiler (the harness of test/quick/typecheck.test.ts): a misspelled header is an error, and
 *   `sunset` is a Date on getPet only.
 */
import { existsSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headerParsers, type HeaderFact } from '../../client/headerValues.js';
import { nextLink } from '../../client/index.js';
import { parseLinkTargets } from '../../client/linkHeader.js';
import { readResponseHeaders } from '../../client/responseHeaders.js';
import { HEADER_KINDS, responseHeadersOf } from '../../scripts/lib/client/responseHeaders.js';
import { loadBundledSpec, type OpenApiDocument } from '../../src/shared/spec.js';
import type { HeadersResult } from '../fixtures/headers-page/page.js';
import { compile, compileCases, diagnosticText as text } from '../support/compile.js';
import { addPets, startTestServer, type TestServer } from '../support/server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fact = (kind: HeaderFact['kind'], more: Partial<HeaderFact> = {}): HeaderFact => ({ header: 'X', kind, required: false, ...more });
const parse = (kind: HeaderFact['kind'], field: string, more: Partial<HeaderFact> = {}, url = '') =>
  (headerParsers[kind] as (field: string, fact: HeaderFact, context: { url: string }) => unknown)(field, fact(kind, more), { url });

describe('the headers of the per-operation methods, from the real server', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite', {}, { inProcess: true });
  });
  afterAll(async () => {
    await t?.close();
  });
  const noViolations = () => expect(t.server.violations.splice(0), 'responses that broke the contract').toEqual([]);

  it('listPets: etag is the raw ETag, nextCursor follows the pages to the last, and a 304 keeps both', async () => {
    await addPets(t, 3);
    const first = await t.client.listPets({ params: { query: { limit: 2 } } });
    expect(first.response.status).toBe(200);
    expect(first.headers.etag).toBe(first.response.headers.get('etag'));
    expect(first.headers.nextCursor).toEqual(expect.any(String));
    // link.next is the target made absolute against the request's URL, and carries the same cursor.
    expect(first.headers.link?.next).toBe(new URL(first.response.headers.get('link')!.match(/<([^>]*)>/)![1]!, first.response.url).href);
    expect(new URL(first.headers.link!.next!).searchParams.get('cursor')).toBe(first.headers.nextCursor);
    // No rate limits configured: the optional headers are absent, read as undefined.
    expect(first.headers.rateLimit).toBeUndefined();

    const second = await t.client.listPets({ params: { query: { limit: 2, cursor: first.headers.nextCursor! } } });
    expect(second.data?.map((p) => p.id)).toEqual([(first.data?.at(-1)?.id ?? 0) + 1]);
    expect(second.headers.nextCursor).toBeUndefined();
    expect(second.headers.link).toBeUndefined();
    expect(second.headers.etag).toBe(second.response.headers.get('etag'));

    const unchanged = await t.client.listPets({ params: { query: { limit: 2 }, header: { 'If-None-Match': first.headers.etag! } } });
    expect(unchanged.response.status).toBe(304);
    expect(unchanged.headers).toMatchObject({ etag: first.headers.etag, nextCursor: first.headers.nextCursor });
    noViolations();
  });

  it('createPet: location on the 201, replayed only on the idempotent retry', async () => {
    const init = { body: { name: 'Biscuit', categoryId: 2 }, params: { header: { 'Idempotency-Key': `headers-${Date.now()}` } } };
    const created = await t.client.createPet(init);
    expect(created.response.status).toBe(201);
    expect(created.headers.location).toBe(`/v1/pets/${created.data?.id}`);
    expect(created.headers.replayed).toBeUndefined();
    const retried = await t.client.createPet(init);
    expect(retried.response.status).toBe(201);
    expect(retried.headers).toMatchObject({ location: created.headers.location, replayed: true });
    noViolations();
  });

  it('getPet: sunset and deprecation as Dates, the deprecation link; on a 404 none of them (the spec declares none there)', async () => {
    const [pet] = await addPets(t, 1);
    const found = await t.client.getPet({ params: { path: { petId: pet!.id } } });
    expect(found.response.status).toBe(200);
    expect(found.headers.sunset).toEqual(new Date('2030-12-05T00:00:00Z'));
    expect(found.headers.sunset).toEqual(new Date(found.response.headers.get('sunset')!));
    expect(found.headers.deprecation).toEqual(new Date('2026-11-21T00:00:00Z'));
    expect(found.headers.link?.deprecation).toBe(new URL('/docs#tag/Pets/operation/getPet', found.response.url).href);
    expect(found.headers.etag).toBe(found.response.headers.get('etag'));

    const missing = await t.client.getPet({ params: { path: { petId: 9_000_000 } } });
    expect(missing.response.status).toBe(404);
    // The server sends Sunset on every answer of a deprecated operation; the 404 does not declare it.
    expect(missing.response.headers.get('sunset')).not.toBeNull();
    expect(Object.keys(missing.headers).sort()).toEqual(['rateLimit', 'rateLimitPolicy']);
    noViolations();
  });

  it("a 401 has the challenge as one of the spec's values, and getPet's 401 its deprecation headers", async () => {
    const { createAnimalStoreClient } = await import('../../client/index.js');
    const stranger = createAnimalStoreClient({ baseUrl: t.api, apiKey: 'ask_not-a-key' });
    const refused = await stranger.getPet({ params: { path: { petId: 1 } } });
    expect(refused.response.status).toBe(401);
    expect(refused.headers.wwwAuthenticate).toBe('Bearer realm="animal-store", error="invalid_token"');
    expect(refused.headers.sunset).toEqual(new Date('2030-12-05T00:00:00Z'));
    noViolations();
  });
});

describe('rateLimit, rateLimitPolicy and retryAfter with RATE_LIMIT set', () => {
  const QUOTA = 3;
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite', { env: { RATE_LIMIT: String(QUOTA) } }, { inProcess: true });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts down remaining, names the quota and window, and a 429 says how long to wait', async () => {
    const remaining: (number | undefined)[] = [];
    for (let i = 0; i < QUOTA; i++) {
      const listed = await t.client.listPets();
      expect(listed.response.status).toBe(200);
      expect(listed.headers.rateLimitPolicy).toEqual({ policy: 'per-key', quota: QUOTA, window: 60 });
      expect(listed.headers.rateLimit?.reset).toBeGreaterThan(0);
      expect(listed.headers.rateLimit?.reset).toBeLessThanOrEqual(60);
      remaining.push(listed.headers.rateLimit?.remaining);
    }
    expect(remaining).toEqual([2, 1, 0]);
    const refused = await t.client.createPet({ body: { name: 'Late', categoryId: 1 } });
    expect(refused.response.status).toBe(429);
    expect(refused.headers.retryAfter).toBe(Number(refused.response.headers.get('retry-after')));
    expect(refused.headers.retryAfter).toBeGreaterThanOrEqual(1);
    expect(refused.headers.rateLimit?.remaining).toBe(0);
    expect(refused.headers.location).toBeUndefined();
    expect(t.server.violations.splice(0)).toEqual([]);
  });
});

const CHROMIUM = '/usr/bin/chromium';

/** A static origin for the page: its HTML and its script (test/fixtures/headers-page/page.ts, bundled). */
async function servePage(): Promise<{ server: Server; origin: string }> {
  const bundle = await build({ entryPoints: [join(root, 'test', 'fixtures', 'headers-page', 'page.ts')], bundle: true, format: 'esm', platform: 'browser', target: 'chrome120', write: false, logLevel: 'silent' });
  const script = bundle.outputFiles[0]?.contents;
  if (!script) throw new Error('esbuild produced no bundle');
  const server = createServer((req, res) => {
    if (req.url === '/page.js') res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' }).end(script);
    else if (req.url === '/') res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<!doctype html><meta charset="utf-8"><title>headers</title><script type="module" src="/page.js"></script>');
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe.skipIf(!existsSync(CHROMIUM))(`the headers in a browser, from another origin (skipped without a browser at ${CHROMIUM})`, () => {
  let page: { server: Server; origin: string } | undefined;
  let browser: Browser | undefined;
  let t: TestServer;
  beforeAll(async () => {
    page = await servePage();
    t = await startTestServer('sqlite', { env: { CORS_ORIGINS: page.origin, RATE_LIMIT: '100' } });
    await addPets(t, 2);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-background-networking'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await new Promise((resolve) => page?.server.close(resolve));
  });

  it('reads every parsed header the server sends, as in Node', async () => {
    const context = await browser!.newContext();
    try {
      const tab = await context.newPage();
      await tab.goto(`${page!.origin}/`, { waitUntil: 'load' });
      await tab.waitForFunction(() => 'readHeaders' in window);
      const result = await tab.evaluate(
        ([url, key]) => (window as unknown as { readHeaders(u: string, k: string): Promise<HeadersResult | { error: string }> }).readHeaders(url, key),
        [t.api, t.key] as const,
      );
      expect(result).not.toHaveProperty('error');
      const read = result as HeadersResult;
      expect(read.etag).toEqual(expect.stringMatching(/^"/));
      expect(read.etag).toBe(read.rawEtag);
      expect(read.nextCursor).toEqual(expect.any(String));
      expect(read.nextListed).toBe(1);
      expect(read.rateLimit).toMatchObject({ policy: 'per-key', remaining: expect.any(Number), reset: expect.any(Number) });
      expect(read.rateLimitPolicy).toEqual({ policy: 'per-key', quota: 100, window: 60 });
      expect(read.location).toMatch(/^\/v1\/pets\/\d+$/);
      expect(read.replayed).toEqual([undefined, true]);
      expect(read.sunset).toBe('2030-12-05T00:00:00.000Z');
      expect(read.deprecation).toBe('2026-11-21T00:00:00.000Z');
      expect(read.deprecationLink).toBe(`${t.origin}/docs#tag/Pets/operation/getPet`);
      expect(t.server.violations.splice(0)).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});

describe('the parsers, one per kind', () => {
  it("RateLimit and RateLimit-Policy: the spec's shape, and any valid Structured Field list", () => {
    expect(parse('rateLimit', '"per-key";r=42;t=17')).toEqual({ policy: 'per-key', remaining: 42, reset: 17 });
    expect(parse('rateLimitPolicy', '"per-key";q=100;w=60')).toEqual({ policy: 'per-key', quota: 100, window: 60 });
    // Parameters in any order, other parameters, a token for the name, several policies (the first that fits).
    expect(parse('rateLimit', 'burst;t=1;x="y";r=5, "per-key";r=9;t=2')).toEqual({ policy: 'burst', remaining: 5, reset: 1 });
    expect(parse('rateLimit', '"a";r=1, "b";r=2;t=3')).toEqual({ policy: 'b', remaining: 2, reset: 3 });
    expect(parse('rateLimitPolicy', '"per-key";q=100')).toBeUndefined();
    for (const bad of ['', 'per key;r=1;t=2', '"p";r=-1;t=2', '"p";r=1.5;t=2', '"p";r=1;t=2,', '"p";r="1";t=2', '("p");r=1;t=2', '"unterminated;r=1;t=2']) {
      expect(parse('rateLimit', bad), bad).toBeUndefined();
    }
  });

  it("RateLimit: a field holding the working group's inner lists and byte sequences is read; one that does not parse is not", () => {
    // Cases of the HTTP working group's suite (github.com/httpwg/structured-field-tests, the file
    // named in each), copied as literals: `raw` is the case's field lines, and our policy arrives as
    // one more line of the same field. The hand parser this client had until issue 32 refused every
    // field with an inner list or a byte sequence in it, so it read none of the valid ones.
    const valid: [file: string, name: string, raw: string[]][] = [
      ['listlist.json', 'basic list of lists', ['(1 2), (42 43)']],
      ['listlist.json', 'empty item list of lists', ['()']],
      ['listlist.json', 'empty middle item list of lists', ['(1),(),(42)']],
      ['listlist.json', 'extra whitespace list of lists', ['(  1  42  )']],
      ['param-listlist.json', 'parameterised inner list', ['(abc_123);a=1;b=2, cdef_456']],
      ['param-listlist.json', 'parameterised inner list item', ['(abc_123;a=1;b=2;cdef_456)']],
      ['examples.json', 'Example-ListListParam', ['("foo"; a=1;b=2);lvl=5, ("bar" "baz");lvl=1']],
      ['examples.json', 'Example-ParamListHeader', ['abc;a=1;b=2; cde_456, (ghi;jk=4 l);q="9";r=w']],
      ['binary.json', 'basic binary', [':aGVsbG8=:']],
      ['binary.json', 'empty binary', ['::']],
      ['examples.json', 'Example-BinaryHdr', [':cHJldGVuZCB0aGlzIGlzIGJpbmFyeSBjb250ZW50Lg==:']],
    ];
    const invalid: typeof valid = [
      ['listlist.json', 'no trailing parenthesis list of lists', ['(1 42']],
      ['listlist.json', 'wrong whitespace list of lists', ['(1\t 42)']],
      ['listlist.json', 'nested inner lists', ['((1))']],
      ['binary.json', 'bad end delimiter', [':aGVsbG8=']],
      ['binary.json', 'extra whitespace', [':aGVsb G8=:']],
    ];
    const ours = '"per-key";r=42;t=17';
    for (const [file, name, raw] of valid) {
      expect(parse('rateLimit', [...raw, ours].join(', ')), `${file}: ${name}`).toEqual({ policy: 'per-key', remaining: 42, reset: 17 });
    }
    // A byte sequence is a parameter value too (dictionary.json's "basic dictionary" has this one).
    expect(parse('rateLimit', `${ours};digest=:w4ZibGV0w6ZydGUK:`)).toEqual({ policy: 'per-key', remaining: 42, reset: 17 });
    for (const [file, name, raw] of invalid) expect(parse('rateLimit', [...raw, ours].join(', ')), `${file}: ${name}`).toBeUndefined();
  });

  it('Sunset: the three HTTP-date forms (RFC 9110 §5.6.7), nothing else', () => {
    const sunset = new Date('2030-12-05T00:00:00Z');
    expect(parse('httpDate', 'Thu, 05 Dec 2030 00:00:00 GMT')).toEqual(sunset);
    expect(parse('httpDate', 'Thursday, 05-Dec-30 00:00:00 GMT')).toEqual(sunset);
    expect(parse('httpDate', 'Thu Dec  5 00:00:00 2030')).toEqual(sunset);
    for (const bad of ['2030-12-05', 'Thu, 31 Feb 2030 00:00:00 GMT', 'Thu, 05 Dec 2030 00:00:00 UTC', 'tomorrow', '1795219200']) {
      expect(parse('httpDate', bad), bad).toBeUndefined();
    }
  });

  it('Deprecation: an RFC 9745 date, @ and seconds', () => {
    expect(parse('structuredDate', '@1795219200')).toEqual(new Date('2026-11-21T00:00:00Z'));
    expect(parse('structuredDate', '@-1')).toEqual(new Date(-1000));
    for (const bad of ['1795219200', '@1.5', 'true', '@', 'Thu, 05 Dec 2030 00:00:00 GMT']) expect(parse('structuredDate', bad), bad).toBeUndefined();
    // From the working group's date.json (github.com/httpwg/structured-field-tests): its edges, and what must fail.
    expect(parse('structuredDate', '@253402214400')).toEqual(new Date('9999-12-31T00:00:00Z'));
    expect(parse('structuredDate', '@-62135596800')).toEqual(new Date('0001-01-01T00:00:00Z'));
    expect(parse('structuredDate', '@-0')).toEqual(new Date(0));
    for (const bad of ['@1659578233.12', '@1000000000000000', '@-', '@ 12345678', '@abc']) expect(parse('structuredDate', bad), bad).toBeUndefined();
  });

  it('ETag: kept exactly as sent when it is an entity tag', () => {
    for (const tag of ['"8sYgmzbigBeDN4Eg9Ts4Ld"', 'W/"x"', '""']) expect(parse('etag', tag)).toBe(tag);
    for (const bad of ['abc', '"a", "b"', 'W/x', '"a"b"']) expect(parse('etag', bad), bad).toBeUndefined();
  });

  it('Link: targets by relation, quoted commas and several relations in one rel; nextCursor from the next one', () => {
    expect(parseLinkTargets('</v1/pets?limit=2&cursor=abc>; rel="next"')).toEqual({ next: '/v1/pets?limit=2&cursor=abc' });
    expect(parseLinkTargets('<https://x.test/a,b>; title="one, two"; rel="Next last", </p>;rel=prev, </n2>; rel=next')).toEqual({
      next: 'https://x.test/a,b',
      last: 'https://x.test/a,b',
      prev: '/p',
    });
    expect(parseLinkTargets('not a link')).toBeUndefined();
    // nextLink, which the tests' own paging uses, reads Link the same way.
    expect([nextLink('<a>; rel=prev, </v1/pets?cursor=c>; rel="next"'), nextLink('</docs>; rel="deprecation"'), nextLink(null)]).toEqual(['/v1/pets?cursor=c', undefined, undefined]);
    expect(parse('link', '</docs#getPet>; rel="deprecation"; type="text/html"', {}, 'http://h.test/v1/pets/1')).toEqual({ deprecation: 'http://h.test/docs#getPet' });
    const cursor = { rel: 'next', parameter: 'cursor' };
    expect(parse('nextCursor', '</v1/pets?limit=2&cursor=eyJhIjoyMH0.c2ln>; rel="next"', cursor)).toBe('eyJhIjoyMH0.c2ln');
    expect(parse('nextCursor', '</docs>; rel="deprecation"', cursor)).toBeUndefined();
    expect(parse('nextCursor', '</v1/pets?limit=2>; rel="next"', cursor)).toBeUndefined();
  });

  it('Retry-After, flags, numbers, date-times, and strings limited to their enum', () => {
    expect(parse('delaySeconds', '17')).toBe(17);
    expect(parse('delaySeconds', 'Thu, 01 Jan 1970 00:00:00 GMT')).toBe(0);
    expect(parse('delaySeconds', '-1')).toBeUndefined();
    expect(parse('flag', 'true')).toBe(true);
    expect(parse('flag', '?0')).toBe(false);
    expect(parse('flag', 'yes')).toBeUndefined();
    expect(parse('number', '42')).toBe(42);
    expect(parse('number', '4x')).toBeUndefined();
    expect(parse('dateTime', '2030-12-05T00:00:00Z')).toEqual(new Date('2030-12-05T00:00:00Z'));
    expect(parse('dateTime', '2030-12-05')).toBeUndefined();
    expect(parse('string', 'anything at all')).toBe('anything at all');
    expect(parse('string', 'Basic', { values: ['Bearer realm="animal-store"'] })).toBeUndefined();
  });

  it('no parser throws, whatever the text: it reads as undefined', () => {
    const texts = ['', ' ', ',', ';', '"', '<', '<>', '<>;', '@', '?', '\\', '"\\', '<a>; rel=', '<a>; rel="', 'r=1;t=2', '\u0000', '%%%', '@99999999999999999999', '9'.repeat(400)];
    for (let i = 0; i < 300; i++) texts.push(Array.from({ length: 1 + (i % 40) }, (_, j) => String.fromCharCode(32 + ((i * 31 + j * 17) % 95))).join(''));
    for (const kind of HEADER_KINDS) {
      for (const text of texts) expect(() => parse(kind, text, { rel: 'next', parameter: 'cursor' }, 'http://h.test/v1/pets'), `${kind}: ${JSON.stringify(text)}`).not.toThrow();
    }
  });

  it('a response reads the headers of its own status: its own, else its range, else default', () => {
    const answer = (status: number, headers: Record<string, string>) => new Response(null, { status, headers });
    const tooMany = readResponseHeaders('listPets', answer(429, { 'Retry-After': '3', ETag: '"x"' }));
    expect(tooMany).toEqual({ retryAfter: 3, rateLimit: undefined, rateLimitPolicy: undefined });
    const undeclared = readResponseHeaders('listPets', answer(503, { RateLimit: '"per-key";r=1;t=2', 'Retry-After': '3' }));
    expect(undeclared).toEqual({ rateLimit: { policy: 'per-key', remaining: 1, reset: 2 }, rateLimitPolicy: undefined });
  });
});

describe('the generator derives every declared header, a new one included', () => {
  it("gives each header of the spec a property and a kind, and a header added to the spec its own, with no client code", () => {
    const document: OpenApiDocument = structuredClone(loadBundledSpec());
    const ok = document.paths?.['/pets']?.get?.responses?.['200'] as { headers?: Record<string, unknown> };
    ok.headers = {
      ...ok.headers,
      'X-Request-ID': { schema: { type: 'string' } },
      'X-Total-Count': { required: true, schema: { type: 'integer' } },
      'Last-Modified': { schema: { type: 'string' } },
      'X-Cache-Until': { schema: { type: 'string', format: 'date-time' } },
    };
    const byStatus = responseHeadersOf(document, '/pets', 'get');
    expect(byStatus['200']).toMatchObject({
      etag: { header: 'ETag', kind: 'etag', required: true },
      link: { header: 'Link', kind: 'link', rels: ['next'] },
      nextCursor: { header: 'Link', kind: 'nextCursor', rel: 'next', parameter: 'cursor' },
      rateLimit: { header: 'RateLimit', kind: 'rateLimit', required: false },
      xRequestId: { header: 'X-Request-ID', kind: 'string', required: false },
      xTotalCount: { header: 'X-Total-Count', kind: 'number', required: true },
      lastModified: { header: 'Last-Modified', kind: 'httpDate' },
      xCacheUntil: { header: 'X-Cache-Until', kind: 'dateTime' },
    });
    expect(Object.keys(byStatus)).toEqual(['200', '304', '400', '401', '403', '429', '500', 'default']);
    expect(responseHeadersOf(document, '/pets', 'post')['201']).toMatchObject({ location: { kind: 'string', required: true }, replayed: { header: 'Idempotent-Replayed', kind: 'flag' } });
    expect(responseHeadersOf(document, '/pets/{petId}', 'get')['200']).toMatchObject({
      sunset: { kind: 'httpDate', required: true },
      deprecation: { kind: 'structuredDate', required: true },
      link: { kind: 'link', rels: ['deprecation'] },
    });
    // getPet has no cursor parameter, so its Link gives no nextCursor.
    expect(responseHeadersOf(document, '/pets/{petId}', 'get')['200']).not.toHaveProperty('nextCursor');
  });
});



// --- The compiler: the same harness as test/quick/typecheck.test.ts (temporary modules inside the project, its tsconfig).

const tmpDir = join(root, 'test', `.vitest-headers-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
const CLIENT = `import { createAnimalStoreClient, type ResponseHeaders, type RateLimit } from '../../client/index.js';
const api = createAnimalStoreClient({ baseUrl: 'http://localhost:8080/v1', apiKey: 'ask_x' });
const listed = await api.listPets({ params: { query: { limit: 2 } } });
const got = await api.getPet({ params: { path: { petId: 1 } } });
const created = await api.createPet({ body: { name: 'A', categoryId: 2 } });
export type Unused = ResponseHeaders<'listPets'> | RateLimit;
`;
const CASES = {
  baseline: `${CLIENT}
// Before narrowing: every header of the operation, as it may be missing.
export const anyStatus: [string | undefined, Date | undefined, string | undefined] = [listed.headers.etag, got.headers.sunset, created.headers.location];
export function narrowed() {
  if (listed.data) {
    const etag: string = listed.headers.etag;
    const cursor: string | undefined = listed.headers.nextCursor;
    const next: string | undefined = listed.headers.link?.next;
    const limit: RateLimit | undefined = listed.headers.rateLimit;
    const quota: number | undefined = listed.headers.rateLimitPolicy?.quota;
    void [etag, cursor, next, limit, quota];
  }
  if (got.data) {
    const sunset: Date = got.headers.sunset;
    const deprecation: Date = got.headers.deprecation;
    const docs: string | undefined = got.headers.link.deprecation;
    void [sunset, deprecation, docs];
  }
  if (created.data) {
    const location: string = created.headers.location;
    const replayed: boolean | undefined = created.headers.replayed;
    void [location, replayed];
  }
  if (created.error) {
    const wait: number | undefined = created.headers.retryAfter;
    // A 401's challenge (an enum) or a 403's, naming the scopes (a pattern): text either way.
    const challenge: string | undefined = created.headers.wwwAuthenticate;
    void [wait, challenge];
  }
}
// One status exactly: a 304 has its ETag.
export const notModified = (h: ResponseHeaders<'listPets', '304'>): string => h.etag;
`,
  misspelledHeader: `${CLIENT}
export const tag = listed.headers.etgs;
`,
  sunsetOnListPets: `${CLIENT}
export const sunset = listed.headers.sunset;
`,
  sunsetIsADate: `${CLIENT}
export const sunset: string | undefined = got.headers.sunset;
`,
  locationBeforeNarrowing: `${CLIENT}
export const location: string = created.headers.location;
`,
  misspelledLinkRelation: `${CLIENT}
export const next = listed.headers.link?.nxt;
`,
} as const;
type CaseName = keyof typeof CASES;
describe('the compiler checks the headers', () => {
  let diagnostics = new Map<CaseName | 'elsewhere', string[]>();
  beforeAll(() => {
    diagnostics = compileCases(root, tmpDir, CASES);
  }, 120_000);
  afterAll(() => rmSync(tmpDir, { recursive: true, force: true }));
  const errorsOf = (name: CaseName | 'elsewhere') => diagnostics.get(name) ?? [];

  it('correct reads compile with zero diagnostics: each header typed by its kind, required ones once the result is narrowed', () => {
    expect(errorsOf('baseline')).toEqual([]);
    expect(errorsOf('elsewhere')).toEqual([]);
  });

  it('a misspelled header (etgs) is an error', () => {
    const errors = errorsOf('misspelledHeader');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^TS2339: Property 'etgs' does not exist on type '\{ readonly etag/);
  });

  it('sunset is no header of listPets', () => {
    const errors = errorsOf('sunsetOnListPets');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("Property 'sunset' does not exist");
  });

  it("getPet's sunset is a Date, not the header's text", () => {
    const errors = errorsOf('sunsetIsADate');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("Type 'Date | undefined' is not assignable to type 'string | undefined'");
  });

  it('a header of one status only (Location, on the 201) may be missing until the result is narrowed to data', () => {
    const errors = errorsOf('locationBeforeNarrowing');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("Type 'string | undefined' is not assignable to type 'string'");
  });

  it('a link relation the spec does not name (nxt) is an error', () => {
    const errors = errorsOf('misspelledLinkRelation');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("Property 'nxt' does not exist");
  });
});
