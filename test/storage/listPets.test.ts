import { beforeAll, describe, expect, it } from 'vitest';
import { nextLink, type Pet } from '../../client/index.js';
import { addPets, describeEachTarget, type TestServer } from '../support/server.js';

const STATUSES = ['available', 'pending', 'sold'] as const;

/** Follows `Link rel="next"` from `first` to the last page; returns every page's pets. */
async function walk(t: TestServer, first: string): Promise<{ pages: Pet[][] }> {
  const pages: Pet[][] = [];
  let next: string | undefined = first;
  while (next) {
    const response = await fetch(`${t.origin}${next}`, { headers: { Authorization: `Bearer ${t.key}` } });
    expect(response.status).toBe(200);
    pages.push((await response.json()) as Pet[]);
    next = nextLink(response.headers.get('link'));
    if (pages.length > 1000) throw new Error('paging does not end');
  }
  return { pages };
}

describeEachTarget('listPets: GET /pets', (t) => {
  it('§4.1 200: an empty store is an empty array with no Link', async () => {
    const { data, response } = await t().client.GET('/pets');
    expect(response.status).toBe(200);
    expect(data).toEqual([]);
    expect(response.headers.get('link')).toBeNull();
  });

  describe('with 250 pets', () => {
    let all: Pet[] = [];
    beforeAll(async () => {
      all = await addPets(t(), 250, (i) => ({ name: `Pet ${i}`, categoryId: 1 + (i % 7), status: STATUSES[i % 3] }));
    });

    it('§8 limit defaults to 20; results ordered by id', async () => {
      const { data, response } = await t().client.GET('/pets');
      expect(data).toEqual(all.slice(0, 20));
      expect(nextLink(response.headers.get('link'))).toMatch(/^\/v1\/pets\?limit=20&cursor=/);
    });

    it('§8 limit bounds: 1 and 100 are honoured', async () => {
      expect((await t().client.GET('/pets', { params: { query: { limit: 1 } } })).data).toEqual(all.slice(0, 1));
      expect((await t().client.GET('/pets', { params: { query: { limit: 100 } } })).data).toEqual(all.slice(0, 100));
    });

    it.each(['0', '101', '-1', 'abc', '1.5', ''])('§8 400: limit=%s is outside 1..100 or not an integer', async (limit) => {
      const response = await t().request(`/pets?limit=${limit}`);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'validation_failed', status: 400, details: [{ in: 'query', field: 'limit' }] });
    });

    it('paging with the default limit reaches all 250 pets exactly once, and the last page has no Link', async () => {
      const { pages } = await walk(t(), '/v1/pets');
      expect(pages.map((p) => p.length)).toEqual([...Array(12).fill(20), 10]);
      expect(pages.flat()).toEqual(all);
    });

    it('paging with limit=100 takes three pages', async () => {
      const { pages } = await walk(t(), '/v1/pets?limit=100');
      expect(pages.map((p) => p.length)).toEqual([100, 100, 50]);
      expect(pages.flat()).toEqual(all);
    });

    it.each(STATUSES)('§4.1 status=%s keeps only those animals, across pages', async (status) => {
      const { pages } = await walk(t(), `/v1/pets?status=${status}&limit=30`);
      expect(pages.flat()).toEqual(all.filter((p) => p.status === status));
    });

    it('the next link keeps limit and status', async () => {
      const { response } = await t().client.GET('/pets', { params: { query: { limit: 5, status: 'sold' } } });
      expect(nextLink(response.headers.get('link'))).toMatch(/^\/v1\/pets\?limit=5&status=sold&cursor=[A-Za-z0-9_.-]+$/);
    });

    it('400: a status outside the enumeration', async () => {
      const response = await t().request('/pets?status=lost');
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'validation_failed', details: [{ in: 'query', field: 'status' }] });
    });

    it('400: a cursor the server never issued', async () => {
      const { response } = await t().client.GET('/pets', { params: { query: { limit: 5 } } });
      const cursor = new URLSearchParams(nextLink(response.headers.get('link'))?.split('?')[1]).get('cursor') ?? '';
      const [payload, signature] = cursor.split('.');
      const forgedPayload = Buffer.from(JSON.stringify({ a: 100 })).toString('base64url');
      for (const forged of [`${forgedPayload}.${signature}`, `${payload}.AAAAAAAAAAAAAAAAAAAAAA`, 'abc', `${payload}`, `${cursor}.x`]) {
        const bad = await t().request(`/pets?cursor=${encodeURIComponent(forged)}`);
        expect(bad.status).toBe(400);
        expect(await bad.json()).toMatchObject({ code: 'validation_failed', details: [{ in: 'query', field: 'cursor' }] });
      }
    });

    it('400: a cursor used with a different status filter than it was issued for', async () => {
      const { response } = await t().client.GET('/pets', { params: { query: { limit: 5, status: 'sold' } } });
      const cursor = new URLSearchParams(nextLink(response.headers.get('link'))?.split('?')[1]).get('cursor') ?? '';
      const bad = await t().request(`/pets?limit=5&status=pending&cursor=${cursor}`);
      expect(bad.status).toBe(400);
    });

    it('400: a query parameter the operation does not have', async () => {
      const response = await t().request('/pets?offset=10');
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ details: [{ in: 'query', field: 'offset' }] });
    });

    it('§4.1 401: missing or invalid key', async () => {
      for (const headers of [{}, { Authorization: 'Bearer nope' }] as Array<Record<string, string>>) {
        const response = await t().request('/pets', { auth: false, headers });
        expect(response.status).toBe(401);
        expect(await response.json()).toEqual({ code: 'unauthorized', message: expect.any(String), status: 401 });
      }
    });
  });
});
