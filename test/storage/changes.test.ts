/**
 * Changing and removing an animal (contract 1.4.0: updatePet, deletePet), on each store: a JSON
 * merge patch changes the fields it names and answers the animal with the ETag getPet gives its
 * new state; If-Match (RFC 9110 §13.1.1, strong comparison) makes a change or a removal happen
 * only while the animal is as it was read, else 412 and nothing is done; a removal takes the
 * photo with it. Two writers never lose each other's change: each write is a compare and set on
 * what it read. Every response is checked against the contract by the test server.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Pet } from '../../client/index.js';
import { ifMatchMatches } from '../../src/domain/etag.js';
import { addPets, describeEachTarget, type TestServer } from '../support/server.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4b50000000049454e44ae426082', 'hex');

interface Answer {
  status: number;
  etag: string | null;
  body: unknown;
}

async function send(t: TestServer, method: string, path: string, { patch, ifMatch, type = 'application/merge-patch+json' }: { patch?: unknown; ifMatch?: string; type?: string } = {}): Promise<Answer> {
  const headers = new Headers();
  if (patch !== undefined) headers.set('Content-Type', type);
  if (ifMatch !== undefined) headers.set('If-Match', ifMatch);
  const response = await t.request(path, { method, headers, ...(patch === undefined ? {} : { body: typeof patch === 'string' ? patch : JSON.stringify(patch) }) });
  const text = await response.text();
  return { status: response.status, etag: response.headers.get('etag'), body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

const read = (t: TestServer, id: number) => send(t, 'GET', `/pets/${id}`);

describe('If-Match matching (RFC 9110 §13.1.1, strong comparison)', () => {
  const tag = '"abc_-DEF012"';
  it.each([
    ['the tag itself', tag, true],
    ['*', '*', true],
    ['a list holding it', `"zzz", ${tag}`, true],
    ['the tag as weak: never, strong comparison', `W/${tag}`, false],
    ['a list holding it only as weak', `"zzz", W/${tag}`, false],
    ['another tag', '"abc_-DEF013"', false],
    ['the tag unquoted', 'abc_-DEF012', false],
    ['empty', '', false],
  ])('%s: %s -> %s', (_what, field, matches) => {
    expect(ifMatchMatches(field, tag)).toBe(matches);
  });
});

describeEachTarget('changing and removing an animal: updatePet, deletePet, If-Match', (t) => {
  let pet: Pet;
  beforeAll(async () => {
    [pet] = (await addPets(t(), 1, () => ({ name: 'Biscuit', categoryId: 2 }))) as [Pet];
  });

  describe('updatePet', () => {
    it('changes the fields the patch names, keeps the others, and answers the animal with the ETag getPet then gives it', async () => {
      const changed = await send(t(), 'PATCH', `/pets/${pet.id}`, { patch: { status: 'pending' } });
      expect(changed.status, JSON.stringify(changed.body)).toBe(200);
      expect(changed.body).toEqual({ ...pet, status: 'pending' });
      const now = await read(t(), pet.id);
      expect(now.body).toEqual(changed.body);
      expect(changed.etag).toBe(now.etag);
      const renamed = await send(t(), 'PATCH', `/pets/${pet.id}`, { patch: { name: 'Biscuit the Brave', categoryId: 3 } });
      expect(renamed.body).toEqual({ id: pet.id, name: 'Biscuit the Brave', categoryId: 3, status: 'pending' });
      expect(renamed.etag).not.toBe(changed.etag);
      // An empty patch changes nothing: the same animal, the same tag.
      const same = await send(t(), 'PATCH', `/pets/${pet.id}`, { patch: {} });
      expect({ status: same.status, body: same.body, etag: same.etag }).toEqual({ status: 200, body: renamed.body, etag: renamed.etag });
    });

    it('with If-Match: changes only while the animal is as read (its tag, a list holding it, *); else 412 precondition_failed and nothing changes', async () => {
      const before = await read(t(), pet.id);
      const tag = before.etag ?? '';
      const stale = await send(t(), 'PATCH', `/pets/${pet.id}`, { patch: { status: 'sold' }, ifMatch: '"AAAAAAAAAAAAAAAAAAAAAA"' });
      expect(stale.status).toBe(412);
      expect(stale.body).toMatchObject({ code: 'precondition_failed', status: 412 });
      // A weak tag never matches (strong comparison), nor does a malformed value.
      for (const ifMatch of [`W/${tag}`, tag.slice(1, -1)]) expect((await send(t(), 'PATCH', `/pets/${pet.id}`, { patch: { status: 'sold' }, ifMatch })).status, ifMatch).toBe(412);
      expect((await read(t(), pet.id)).body).toEqual(before.body);
      const changed = await send(t(), 'PATCH', `/pets/${pet.id}`, { patch: { status: 'sold' }, ifMatch: `"zzz", ${tag}` });
      expect(changed.status).toBe(200);
      // The tag read before is stale now: a second editor holding it gets a 412.
      expect((await send(t(), 'PATCH', `/pets/${pet.id}`, { patch: { status: 'available' }, ifMatch: tag })).status).toBe(412);
      expect((await send(t(), 'PATCH', `/pets/${pet.id}`, { patch: { status: 'available' }, ifMatch: '*' })).status).toBe(200);
    });

    it('two editors holding the same tag: exactly one change is made, the other gets 412', async () => {
      const { etag } = await read(t(), pet.id);
      const answers = await Promise.all(['Miso', 'Tofu'].map((name) => send(t(), 'PATCH', `/pets/${pet.id}`, { patch: { name }, ifMatch: etag ?? '' })));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
      const winner = answers.find((a) => a.status === 200);
      expect((await read(t(), pet.id)).body).toEqual(winner?.body);
    });

    it('concurrent changes without If-Match to different fields: none is lost', async () => {
      const [other] = (await addPets(t(), 1, () => ({ name: 'Rex', categoryId: 1 }))) as [Pet];
      await Promise.all([send(t(), 'PATCH', `/pets/${other.id}`, { patch: { name: 'Rex II' } }), send(t(), 'PATCH', `/pets/${other.id}`, { patch: { status: 'sold' } }), send(t(), 'PATCH', `/pets/${other.id}`, { patch: { categoryId: 4 } })]);
      expect((await read(t(), other.id)).body).toEqual({ id: other.id, name: 'Rex II', categoryId: 4, status: 'sold' });
    });

    it('refuses what the contract refuses, changing nothing: null for a field (400 naming it), an unknown field, a bad value, JSON labelled application/json (415), an unknown animal (404)', async () => {
      const before = await read(t(), pet.id);
      const nulled = await send(t(), 'PATCH', `/pets/${pet.id}`, { patch: { name: null } });
      expect(nulled.status).toBe(400);
      expect(nulled.body).toMatchObject({ code: 'validation_failed', details: [{ in: 'body', field: 'name' }] });
      for (const patch of [{ owner: 'Ada' }, { status: 'lost' }, { categoryId: 0 }, { id: 99 }, '{"name":']) {
        const answer = await send(t(), 'PATCH', `/pets/${pet.id}`, { patch });
        expect(answer.status, JSON.stringify(patch)).toBe(400);
      }
      expect((await send(t(), 'PATCH', `/pets/${pet.id}`, { patch: { status: 'sold' }, type: 'application/json' })).status).toBe(415);
      expect((await send(t(), 'PATCH', '/pets/987654321', { patch: { status: 'sold' } })).status).toBe(404);
      expect((await read(t(), pet.id)).body).toEqual(before.body);
    });
  });

  describe('key scopes: reads need pets:read, changes pets:write', () => {
    it('a key made with pets:read reads and is refused every change with 403 insufficient_scope naming pets:write; one with pets:write the other way round; a key made without --scopes does both', async () => {
      const { keys } = t().server;
      const reader = (await keys.create('reader-example', ['pets:read'])).key;
      const writer = (await keys.create('writer-example', ['pets:write'])).key;
      const as = (key: string, path: string, init: RequestInit = {}) => t().request(path, { ...init, auth: false, headers: { ...(init.headers as Record<string, string> | undefined), Authorization: `Bearer ${key}` } });
      const patchInit = { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{"status":"pending"}' };
      const createInit = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":"Scoped","categoryId":1}' };
      // A new key is known once the server's key cache reloads (every 200 ms in tests).
      await expect.poll(async () => [(await as(reader, '/pets')).status, (await as(writer, `/pets/${pet.id}`, patchInit)).status], { timeout: 5_000 }).toEqual([200, 200]);
      for (const path of ['/pets', `/pets/${pet.id}`]) expect((await as(reader, path)).status, path).toBe(200);
      for (const [path, init] of [['/pets', createInit], [`/pets/${pet.id}`, patchInit], [`/pets/${pet.id}`, { method: 'DELETE' }]] as const) {
        const refused = await as(reader, path, init);
        expect(refused.status, `${init.method} ${path}`).toBe(403);
        expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"');
        expect(await refused.json()).toMatchObject({ code: 'insufficient_scope', status: 403 });
      }
      expect((await as(writer, `/pets/${pet.id}`)).status).toBe(403);
      expect((await as(writer, `/pets/${pet.id}`, patchInit)).status).toBe(200);
      expect((await t().request(`/pets/${pet.id}`, patchInit)).status).toBe(200);
    });
  });

  describe('deletePet', () => {
    it('removes the animal and its photo: 204, then getPet, getPetPhoto and a second removal are 404, and listPets no longer holds it', async () => {
      const [gone] = (await addPets(t(), 1, () => ({ name: 'Gone', categoryId: 1 }))) as [Pet];
      const stored = await t().request(`/pets/${gone.id}/photo`, { method: 'PUT', headers: { 'Content-Type': 'image/png' }, body: PNG });
      expect(stored.status).toBe(204);
      const removed = await send(t(), 'DELETE', `/pets/${gone.id}`);
      expect(removed.status).toBe(204);
      expect(removed.body).toBeUndefined();
      expect((await read(t(), gone.id)).status).toBe(404);
      expect((await t().request(`/pets/${gone.id}/photo`)).status).toBe(404);
      expect((await send(t(), 'DELETE', `/pets/${gone.id}`)).status).toBe(404);
      const page = (await (await t().request('/pets?limit=100')).json()) as Pet[];
      expect(page.map((p) => p.id)).not.toContain(gone.id);
      // Its id is never given again.
      const [next] = (await addPets(t(), 1)) as [Pet];
      expect(next.id).toBeGreaterThan(gone.id);
    });

    it('a photo stored while its animal is removed: the PUT is a 204 or a 404, never a 500, and no photo outlives the animal', async () => {
      const doomed = await addPets(t(), 20, (i) => ({ name: `Raced ${i}`, categoryId: 1 }));
      const answers = await Promise.all(
        doomed.flatMap((each) => [
          t().request(`/pets/${each.id}/photo`, { method: 'PUT', headers: { 'Content-Type': 'image/png' }, body: PNG }).then((r) => r.status),
          send(t(), 'DELETE', `/pets/${each.id}`).then((r) => r.status),
        ]),
      );
      expect(answers.filter((status, i) => (i % 2 === 0 ? ![204, 404].includes(status) : status !== 204))).toEqual([]);
      for (const each of doomed) expect((await t().request(`/pets/${each.id}/photo`)).status).toBe(404);
    });

    it('with If-Match: removes only while the animal is as read; a stale tag is a 412 and the animal and its photo stay', async () => {
      const [kept] = (await addPets(t(), 1, () => ({ name: 'Kept', categoryId: 1 }))) as [Pet];
      await t().request(`/pets/${kept.id}/photo`, { method: 'PUT', headers: { 'Content-Type': 'image/png' }, body: PNG });
      const { etag } = await read(t(), kept.id);
      await send(t(), 'PATCH', `/pets/${kept.id}`, { patch: { status: 'sold' } });
      const refused = await send(t(), 'DELETE', `/pets/${kept.id}`, { ifMatch: etag ?? '' });
      expect(refused.status).toBe(412);
      expect(refused.body).toMatchObject({ code: 'precondition_failed' });
      expect((await read(t(), kept.id)).status).toBe(200);
      expect((await t().request(`/pets/${kept.id}/photo`)).status).toBe(200);
      const fresh = await read(t(), kept.id);
      expect((await send(t(), 'DELETE', `/pets/${kept.id}`, { ifMatch: fresh.etag ?? '' })).status).toBe(204);
    });
  });
});
