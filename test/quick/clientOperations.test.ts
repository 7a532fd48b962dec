/**
 * The typed client's per-operation methods at run time: one per entry of client/generated/operations.ts,
 * each sending exactly the request its path method sends (method, URL, headers, body) and giving
 * back the same result, plus the response headers its operation declares, parsed (`headers`).
 * Their types and the editor's deprecation mark: test/quick/typecheck.test.ts; the headers in full:
 * test/quick/clientHeaders.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createAnimalStoreClient, type AnimalStoreClient } from '../../client/index.js';
import { operationRoutes } from '../../client/generated/operations.js';

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A client whose fetch records each request and answers it with a fixed JSON body. */
function recordingClient(): { api: AnimalStoreClient; sent: Sent[] } {
  const sent: Sent[] = [];
  const api = createAnimalStoreClient({
    baseUrl: 'http://api.test/v1/',
    apiKey: 'ask_test',
    fetch: async (request: Request) => {
      const headers: Record<string, string> = {};
      request.headers.forEach((value, name) => (headers[name] = value));
      sent.push({ method: request.method, url: request.url, headers, body: await request.text() });
      return new Response(JSON.stringify({ id: 1, name: 'Biscuit', categoryId: 2, status: 'available' }), { headers: { 'Content-Type': 'application/json', ETag: '"e1"' } });
    },
  });
  return { api, sent };
}

describe('the credential of the typed client', () => {
  it('an access token provider (OAuth2, OpenID Connect) is asked before each request, and its token sent as a bearer token', async () => {
    const sent: string[] = [];
    let issued = 0;
    const api = createAnimalStoreClient({
      baseUrl: 'http://api.test/v1',
      accessToken: async () => `token-${++issued}`,
      fetch: async (request: Request) => {
        sent.push(request.headers.get('authorization') ?? '');
        return new Response('[]', { headers: { 'Content-Type': 'application/json' } });
      },
    });
    await api.listPets({});
    await api.GET('/pets');
    expect(sent).toEqual(['Bearer token-1', 'Bearer token-2']);
  });
});

describe('the per-operation methods of the typed client', () => {
  it('the client has a method for every operation of client/generated/operations.ts', () => {
    const { api } = recordingClient();
    const ids = Object.keys(operationRoutes);
    expect(ids).toEqual(expect.arrayContaining(['listPets', 'createPet', 'getPet']));
    for (const id of ids) expect(typeof (api as unknown as Record<string, unknown>)[id], id).toBe('function');
  });

  it('each sends the request its path method sends, and answers alike', async () => {
    const { api, sent } = recordingClient();
    type Call = () => Promise<{ data?: unknown; error?: unknown; response: Response; headers?: unknown }>;
    const pairs: [string, Call, Call][] = [
      ['listPets', () => api.listPets({ params: { query: { limit: 5, status: 'sold' } } }), () => api.GET('/pets', { params: { query: { limit: 5, status: 'sold' } } })],
      ['listPets without init', () => api.listPets(), () => api.GET('/pets')],
      ['createPet', () => api.createPet({ body: { name: 'Biscuit', categoryId: 2 }, params: { header: { 'Idempotency-Key': 'k-1' } } }), () => api.POST('/pets', { body: { name: 'Biscuit', categoryId: 2 }, params: { header: { 'Idempotency-Key': 'k-1' } } })],
      // Deprecated, and still a working call until its sunset.
      ['getPet', () => api.getPet({ params: { path: { petId: 7 } } }), () => api.GET('/pets/{petId}', { params: { path: { petId: 7 } } })],
    ];
    for (const [name, byId, byPath] of pairs) {
      const [fromId, fromPath] = [await byId(), await byPath()];
      const [a, b] = sent.splice(0);
      expect(a, name).toEqual(b);
      expect(a?.url, name).toMatch(/^http:\/\/api\.test\/v1\/pets/);
      expect({ data: fromId.data, error: fromId.error, status: fromId.response.status }, name).toEqual({ data: fromPath.data, error: fromPath.error, status: fromPath.response.status });
      expect(fromId.data, name).toMatchObject({ name: 'Biscuit' });
      // Only the per-operation method adds the headers, those of the status received: a 200 has an
      // ETag on listPets and getPet; on createPet it is no declared status, so its `default`'s.
      expect(fromPath.headers, name).toBeUndefined();
      if (name === 'createPet') expect(fromId.headers, name).toEqual({ rateLimit: undefined, rateLimitPolicy: undefined });
      else expect(fromId.headers, name).toMatchObject({ etag: '"e1"' });
    }
  });
});
