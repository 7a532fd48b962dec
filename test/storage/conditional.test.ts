/**
 * Conditional reads (issue 13, item 2): getPet and listPets answer 200 with a strong `ETag`
 * derived from the answer's bytes, and 304 with no body when `If-None-Match` matches it (RFC 9110
 * §13.1.2: `*`, lists, weak comparison). Nothing is cached on the server: a page read right after
 * a 201 has the new pet, and its tag changed; a page the create did not touch keeps its tag.
 * Tagged answers are `Cache-Control: private, no-cache` (a browser may keep them and must
 * revalidate); everything else stays `no-store` with no `ETag`. Every response is also checked
 * against the contract by the test server (the 304s included).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pet } from '../../client/index.js';
import { entityTag, ifNoneMatchMatches, REVALIDATE } from '../../src/domain/etag.js';
import { addPets, describeEachTarget, startTestServer, type TestServer } from '../support/server.js';

const STRONG_TAG = /^"[A-Za-z0-9_-]{22}"$/;
const SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT';

interface Read {
  status: number;
  etag: string | null;
  link: string | null;
  text: string;
  headers: Headers;
}

async function read(t: TestServer, path: string, ifNoneMatch?: string, init: RequestInit & { auth?: boolean } = {}): Promise<Read> {
  const headers = new Headers(init.headers);
  if (ifNoneMatch !== undefined) headers.set('If-None-Match', ifNoneMatch);
  const response = await t.request(path, { ...init, headers });
  const text = await response.text();
  return { status: response.status, etag: response.headers.get('etag'), link: response.headers.get('link'), text, headers: response.headers };
}

/** A 304 as RFC 9110 §15.4.5 wants it: no body, the validator and Cache-Control of the 200. */
function expectNotModified(answer: Read, etag: string): void {
  expect(answer.status, answer.text).toBe(304);
  expect(answer.text).toBe('');
  expect(answer.etag).toBe(etag);
  expect(answer.headers.get('cache-control')).toBe(REVALIDATE);
  expect(answer.headers.get('content-type')).toBeNull();
}

/** An answer that is not a tagged 200: no validator, nothing stored. */
function expectUntagged(answer: Read): void {
  expect(answer.etag, `${answer.status} ${answer.text}`).toBeNull();
  expect(answer.headers.get('cache-control')).toBe('no-store');
}

describe('If-None-Match matching (RFC 9110 §13.1.2, weak comparison)', () => {
  const tag = '"abc_-DEF012"';
  it.each([
    ['the tag itself', tag, true],
    ['the tag as weak', `W/${tag}`, true],
    ['*', '*', true],
    ['* with whitespace', '  *  ', true],
    ['a list holding it', `"zzz", ${tag}`, true],
    ['a list holding it weak, no spaces', `"zzz",W/${tag}`, true],
    ['a list with empty elements and tabs', `,\t, "zzz" ,\t${tag} ,`, true],
    ['repeated fields as Node joins them', `"zzz", W/"yyy", ${tag}`, true],
    ['a tag with a comma inside, then it', `"a,b", ${tag}`, true],
    ['another tag', '"abc_-DEF013"', false],
    ['a longer tag that starts with it', '"abc_-DEF0123"', false],
    ['the tag unquoted', 'abc_-DEF012', false],
    ['lower-case weak indicator', `w/${tag}`, false],
    ['* inside a list', `"zzz", *`, false],
    ['garbage before it', `zzz, ${tag}`, false],
    ['an unterminated tag', '"abc', false],
    ['two tags without a comma', `"zzz" ${tag}`, false],
    ['empty', '', false],
  ])('%s: %s -> %s', (_what, field, matches) => {
    expect(ifNoneMatchMatches(field, tag)).toBe(matches);
  });

  it('the tag is strong, 22 base64url characters of SHA-256, and covers the body and the handler headers', () => {
    const body = '[{"id":1,"name":"Biscuit","categoryId":2,"status":"available"}]';
    expect(entityTag(body, {})).toMatch(STRONG_TAG);
    expect(entityTag(body, {})).toBe(entityTag(body, {}));
    expect(entityTag(body, {})).not.toBe(entityTag(body.replace('Biscuit', 'Biscuiu'), {}));
    expect(entityTag(body, {})).not.toBe(entityTag(body, { Link: '</v1/pets?limit=1&cursor=a.b>; rel="next"' }));
  });
});

describeEachTarget('conditional reads: ETag and If-None-Match', (t) => {
  let pet: Pet;
  beforeAll(async () => {
    [pet] = (await addPets(t(), 1)) as [Pet];
  });

  describe('getPet', () => {
    it('200 carries a strong ETag computed from the bytes sent, stable across reads, and Cache-Control: private, no-cache', async () => {
      const first = await read(t(), `/pets/${pet.id}`);
      expect(first.status).toBe(200);
      expect(first.etag).toMatch(STRONG_TAG);
      expect(first.etag).toBe(entityTag(first.text, {}));
      expect(first.headers.get('cache-control')).toBe(REVALIDATE);
      const again = await read(t(), `/pets/${pet.id}`);
      expect(again.etag).toBe(first.etag);
      // Another pet, another tag.
      const [other] = (await addPets(t(), 1)) as [Pet];
      expect((await read(t(), `/pets/${other.id}`)).etag).not.toBe(first.etag);
    });

    it('304 with no body for a matching If-None-Match (the tag, W/, a list, *), keeping ETag, Deprecation and Sunset', async () => {
      const { etag } = await read(t(), `/pets/${pet.id}`);
      if (!etag) throw new Error('no ETag');
      for (const condition of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
        const answer = await read(t(), `/pets/${pet.id}`, condition);
        expectNotModified(answer, etag);
        expect(answer.headers.get('sunset'), condition).toBe(SUNSET);
        expect(answer.headers.get('deprecation'), condition).toMatch(/^@\d+$/);
      }
    });

    it('200 with the body for a tag that does not match, or a value that is not a list of tags', async () => {
      const plain = await read(t(), `/pets/${pet.id}`);
      for (const condition of ['"nope"', 'nope', plain.etag?.slice(1, -1) ?? '', `w/${plain.etag ?? ''}`]) {
        const answer = await read(t(), `/pets/${pet.id}`, condition);
        expect(answer.status, condition).toBe(200);
        expect(answer.text).toBe(plain.text);
        expect(answer.etag).toBe(plain.etag);
      }
    });

    it('the typed client sends If-None-Match and sees the 304', async () => {
      const first = await t().client.GET('/pets/{petId}', { params: { path: { petId: pet.id } } });
      const etag = first.response.headers.get('etag') ?? '';
      const second = await t().client.GET('/pets/{petId}', { params: { path: { petId: pet.id }, header: { 'If-None-Match': etag } } });
      expect(second.response.status).toBe(304);
      expect(second.data).toBeUndefined();
    });

    it('conditions apply to 200s only: a missing pet is 404 even for *, and a bad key 401 before any tag', async () => {
      const { etag } = await read(t(), `/pets/${pet.id}`);
      const missing = await read(t(), '/pets/987654321', '*');
      expect(missing.status).toBe(404);
      expectUntagged(missing);
      const unauthorized = await read(t(), `/pets/${pet.id}`, etag ?? '*', { auth: false });
      expect(unauthorized.status).toBe(401);
      expectUntagged(unauthorized);
      const invalid = await read(t(), '/pets/abc', '*');
      expect(invalid.status).toBe(400);
      expectUntagged(invalid);
    });
  });

  describe('listPets', () => {
    it('list, create, list with the first ETag: 200 with the new pet and a new ETag; then 304 with the new one', async () => {
      // No sold pet yet: the first page is empty, and tagged like any other.
      const before = await read(t(), '/pets?status=sold&limit=100');
      expect(before.status).toBe(200);
      expect(before.text).toBe('[]');
      expect(before.etag).toBe(entityTag('[]', {}));
      expect(before.headers.get('cache-control')).toBe(REVALIDATE);
      expectNotModified(await read(t(), '/pets?status=sold&limit=100', before.etag ?? ''), before.etag ?? '');

      const [created] = (await addPets(t(), 1, () => ({ name: 'Sold right now', categoryId: 4, status: 'sold' }))) as [Pet];
      const after = await read(t(), '/pets?status=sold&limit=100', before.etag ?? '');
      expect(after.status).toBe(200);
      expect(JSON.parse(after.text)).toContainEqual(created);
      expect(after.etag).toMatch(STRONG_TAG);
      expect(after.etag).not.toBe(before.etag);
      expect(after.etag).toBe(entityTag(after.text, {}));
      expectNotModified(await read(t(), '/pets?status=sold&limit=100', after.etag ?? ''), after.etag ?? '');
    });

    it('a page the create does not change keeps its ETag: 304, with its Link', async () => {
      await addPets(t(), 3, (i) => ({ name: `Pending ${i}`, categoryId: 3, status: 'pending' }));
      const first = await read(t(), '/pets?status=pending&limit=2');
      expect(first.link).toMatch(/rel="next"/);
      expect(first.etag).toBe(entityTag(first.text, { Link: first.link ?? '' }));
      // A later id lands after this page; another status lands on another list.
      await addPets(t(), 1, () => ({ name: 'Pending later', categoryId: 3, status: 'pending' }));
      await addPets(t(), 1, () => ({ name: 'Sold elsewhere', categoryId: 3, status: 'sold' }));
      const again = await read(t(), '/pets?status=pending&limit=2', first.etag ?? '');
      expectNotModified(again, first.etag ?? '');
      expect(again.link).toBe(first.link);
    });

    it('the same body with a new Link is a new ETag: the last page that stops being last', async () => {
      const all = JSON.parse((await read(t(), '/pets?status=available&limit=100')).text) as Pet[];
      const limit = all.length;
      expect(limit).toBeGreaterThan(0);
      const last = await read(t(), `/pets?status=available&limit=${limit}`);
      expect(last.link).toBeNull();
      await addPets(t(), 1, () => ({ name: 'One more', categoryId: 1 }));
      const now = await read(t(), `/pets?status=available&limit=${limit}`, last.etag ?? '');
      expect(now.status).toBe(200);
      expect(now.text).toBe(last.text);
      expect(now.link).toMatch(/rel="next"/);
      expect(now.etag).not.toBe(last.etag);
    });

    it('a page read right after a 201 has the new pet (nothing cached on the server), through the unfiltered list too', async () => {
      const before = await read(t(), '/pets?limit=100');
      const [created] = (await addPets(t(), 1)) as [Pet];
      const after = await read(t(), '/pets?limit=100', before.etag ?? '');
      expect(after.status).toBe(200);
      expect(JSON.parse(after.text)).toContainEqual(created);
    });

    it('errors and creates carry no ETag and stay no-store, whatever If-None-Match says', async () => {
      const invalid = await read(t(), '/pets?limit=0', '*');
      expect(invalid.status).toBe(400);
      expectUntagged(invalid);
      const unauthorized = await read(t(), '/pets', '*', { auth: false });
      expect(unauthorized.status).toBe(401);
      expectUntagged(unauthorized);
      const created = await read(t(), '/pets', '*', { method: 'POST', body: '{"name":"Rex","categoryId":3}', headers: { 'Content-Type': 'application/json' } });
      expect(created.status).toBe(201);
      expectUntagged(created);
    });
  });
});

describe('CORS: ETag readable, If-None-Match allowed in preflights (derived from the contract)', () => {
  let t: TestServer;
  const origin = 'http://localhost:5173';
  beforeAll(async () => {
    t = await startTestServer('sqlite', { env: { CORS_ORIGINS: origin } });
    await addPets(t, 1);
  });
  afterAll(async () => {
    await t.close();
  });

  it('a preflight asking for If-None-Match is allowed', async () => {
    const response = await fetch(`${t.api}/pets`, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization, if-none-match' } });
    expect(response.status).toBe(204);
    const allowed = (response.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'if-none-match']));
  });

  it('ETag is exposed on the 200 and the 304, which carries the CORS headers too', async () => {
    const first = await read(t, '/pets', undefined, { headers: { Origin: origin } });
    const exposed = (first.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    expect(exposed).toContain('etag');
    const again = await read(t, '/pets', first.etag ?? '', { headers: { Origin: origin } });
    expectNotModified(again, first.etag ?? '');
    expect(again.headers.get('access-control-allow-origin')).toBe(origin);
    expect((again.headers.get('access-control-expose-headers') ?? '').toLowerCase()).toContain('etag');
  });
});
