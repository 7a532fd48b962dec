/**
 * Pet photos (contract 1.3.0): PUT and GET /pets/{petId}/photo, and createPet as a form with a
 * photo file, against the real server on each storage target (SQLite here; PGlite, PostgreSQL
 * and PostgreSQL through PgBouncer in the storage suite), every response checked against the
 * contract. Then, in process on SQLite: a form whose photo cannot be stored stores no animal
 * either (one transaction), and the sandbox's reset empties the photos.
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStores } from '../../generated/stores.js';
import type { Pet } from '../../client/index.js';
import { openSqlite } from '../../src/store/database.js';
import { loadBundledSpec } from '../../src/shared/spec.js';
import { createSandboxStore } from '../../src/features/sandbox/store.js';
import { inUnitOfWork } from '../../src/store/queries/unitOfWork.js';
import { injectable } from '../support/inject.js';
import { addPets, countPets, describeEachTarget } from '../support/server.js';

const example = (name: string) => readFileSync(join(process.cwd(), 'spec', 'examples', name));
const PNG = example('biscuit.png');
const JPEG = example('biscuit.jpg');
const WEBP = example('biscuit.webp');
const LIMIT = 5 * 1024 * 1024;
const STRONG_TAG = /^"[A-Za-z0-9_-]{22}"$/;

/** `size` bytes that begin with PNG's signature. */
function pngOf(size: number): Buffer {
  const bytes = Buffer.alloc(size, 0x2a);
  PNG.copy(bytes, 0, 0, 8);
  return bytes;
}

// Over a socket: uploads refused before their body is read (415, 413, 401) are drained from the connection or cut, which only a connection shows.
describeEachTarget('pet photos: PUT and GET /pets/{petId}/photo, createPet as a form', (t) => {
  let pet: Pet;
  let bare: Pet;
  beforeAll(async () => {
    [pet, bare] = (await addPets(t(), 2)) as [Pet, Pet];
  });

  const put = (id: number, body: Buffer, type: string, init: { auth?: boolean } = {}) =>
    t().request(`/pets/${id}/photo`, { method: 'PUT', body: new Uint8Array(body), headers: { 'Content-Type': type }, ...init });
  const get = (id: number, headers: Record<string, string> = {}, method = 'GET') => t().request(`/pets/${id}/photo`, { method, headers });
  const bytesOf = async (response: Response) => Buffer.from(await response.arrayBuffer());

  describe('PUT stores a PNG, JPEG or WebP; GET answers it as it was stored', () => {
    it.each([
      ['image/png', PNG],
      ['image/jpeg', JPEG],
      ['image/webp', WEBP],
    ] as const)('204 for %s, then GET answers the same bytes with that media type (replacing the photo before)', async (type, image) => {
      const stored = await put(pet.id, image, type);
      expect(stored.status, await stored.clone().text()).toBe(204);
      expect(await stored.text()).toBe('');
      const answer = await get(pet.id);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe(type);
      expect(answer.headers.get('content-length')).toBe(String(image.length));
      expect((await bytesOf(answer)).equals(image)).toBe(true);
    });

    it('200 carries a strong ETag, Accept-Ranges: bytes, nosniff, a sandboxing CSP and private, no-cache', async () => {
      await put(pet.id, PNG, 'image/png');
      const answer = await get(pet.id);
      expect(answer.headers.get('etag')).toMatch(STRONG_TAG);
      expect(answer.headers.get('accept-ranges')).toBe('bytes');
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'; sandbox");
      expect(answer.headers.get('cache-control')).toBe('private, no-cache');
    });

    it('the ETag changes with the photo, and is the same for the same bytes', async () => {
      await put(pet.id, PNG, 'image/png');
      const first = (await get(pet.id)).headers.get('etag');
      await put(pet.id, JPEG, 'image/jpeg');
      const second = (await get(pet.id)).headers.get('etag');
      await put(pet.id, PNG, 'image/png');
      expect(second).not.toBe(first);
      expect((await get(pet.id)).headers.get('etag')).toBe(first);
    });

    it('exactly 5 MiB (5,242,880 bytes) is stored and answered whole', async () => {
      const big = pngOf(LIMIT);
      expect((await put(pet.id, big, 'image/png')).status).toBe(204);
      const answer = await get(pet.id);
      expect(answer.headers.get('content-length')).toBe(String(LIMIT));
      expect((await bytesOf(answer)).equals(big)).toBe(true);
      await put(pet.id, PNG, 'image/png');
    });
  });

  describe('PUT refusals store nothing', () => {
    beforeAll(async () => {
      await put(pet.id, PNG, 'image/png');
    });
    const unchanged = async () => expect((await bytesOf(await get(pet.id))).equals(PNG)).toBe(true);

    it.each([
      ['JPEG bytes sent as image/png', 'image/png', JPEG, 'PNG'],
      ['PNG bytes sent as image/jpeg', 'image/jpeg', PNG, 'JPEG'],
      ['a RIFF that is not WEBP sent as image/webp', 'image/webp', Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE')]), 'WebP'],
      ['text sent as image/png', 'image/png', Buffer.from('not an image'), 'PNG'],
      ['the first 7 bytes of the PNG signature', 'image/png', PNG.subarray(0, 7), 'PNG'],
    ] as const)('400 invalid_image (a MediaError) for %s', async (_what, type, body, format) => {
      const refused = await put(pet.id, body, type);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({ code: 'invalid_image', status: 400, message: `The request body is not a ${format} image; its first bytes are not the ${format} signature.` });
      await unchanged();
    });

    it('400 validation_failed for an empty body (Content-Length: 0): the body is required, whatever its media type', async () => {
      const refused = await put(pet.id, Buffer.alloc(0), 'image/png');
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ code: 'validation_failed', status: 400, details: [{ in: 'body', field: '', message: expect.stringContaining('is required') }] });
      await unchanged();
    });

    it('404 not_found for an unknown animal, and no photo appears for it', async () => {
      const refused = await put(987654, PNG, 'image/png');
      expect(refused.status).toBe(404);
      expect(await refused.json()).toEqual({ code: 'not_found', status: 404, message: 'No animal has id 987654.' });
      expect((await get(987654)).status).toBe(404);
    });

    it('413 payload_too_large for one byte over 5 MiB', async () => {
      const refused = await put(pet.id, pngOf(LIMIT + 1), 'image/png');
      expect(refused.status).toBe(413);
      expect(await refused.json()).toMatchObject({ code: 'payload_too_large', status: 413, message: `The request body is larger than ${LIMIT} bytes.` });
      await unchanged();
    });

    it.each(['image/gif', 'application/octet-stream', 'application/json', 'text/plain', 'image/*'])('415 unsupported_media_type for %s', async (type) => {
      const refused = await put(pet.id, PNG, type);
      expect(refused.status).toBe(415);
      expect(await refused.json()).toMatchObject({ code: 'unsupported_media_type', status: 415, message: expect.stringContaining('image/png or image/jpeg or image/webp') });
      await unchanged();
    });

    it('401 without an API key, for PUT and GET alike, an existing photo or none', async () => {
      for (const answer of [await put(pet.id, JPEG, 'image/jpeg', { auth: false }), await t().request(`/pets/${pet.id}/photo`, { auth: false }), await t().request(`/pets/${bare.id}/photo`, { auth: false })]) {
        expect(answer.status).toBe(401);
        expect(await answer.json()).toMatchObject({ code: 'unauthorized', status: 401 });
        expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer /);
      }
      await unchanged();
    });

    it('400 validation_failed for a petId that is not an id', async () => {
      for (const answer of [await put(0, PNG, 'image/png'), await t().request('/pets/abc/photo')]) {
        expect(answer.status).toBe(400);
        expect(await answer.json()).toMatchObject({ code: 'validation_failed', details: [{ in: 'path', field: 'petId' }] });
      }
    });
  });

  describe('GET: 404s, conditional reads and ranges', () => {
    let etag: string;
    const size = PNG.length;
    beforeAll(async () => {
      await put(pet.id, PNG, 'image/png');
      etag = (await get(pet.id)).headers.get('etag') ?? '';
    });

    it('404 not_found for an animal without a photo, and for no animal, each saying which', async () => {
      const none = await get(bare.id);
      expect(none.status).toBe(404);
      expect(await none.json()).toEqual({ code: 'not_found', status: 404, message: `The animal with id ${bare.id} has no photo.` });
      const missing = await get(987654);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ code: 'not_found', status: 404, message: 'No animal has id 987654.' });
    });

    it('304 with the same ETag and no body for If-None-Match with it (alone, weak, in a list, *); 200 for another tag', async () => {
      for (const condition of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const answer = await get(pet.id, { 'If-None-Match': condition });
        expect(answer.status, condition).toBe(304);
        expect(answer.headers.get('etag')).toBe(etag);
        expect(await answer.text()).toBe('');
      }
      expect((await get(pet.id, { 'If-None-Match': '"other"' })).status).toBe(200);
    });

    it.each([
      ['bytes=0-9', 0, 9],
      ['bytes=10-', 10, size - 1],
      ['bytes=-16', size - 16, size - 1],
      [`bytes=100-${size + 1000}`, 100, size - 1],
      ['bytes=0-3,2-6', 0, 6],
      ['bytes=0-3,4-7', 0, 7],
    ] as const)('206 for Range: %s, with Content-Range, the ETag and Accept-Ranges', async (range, first, last) => {
      const answer = await get(pet.id, { Range: range });
      expect(answer.status).toBe(206);
      expect(answer.headers.get('content-range')).toBe(`bytes ${first}-${last}/${size}`);
      expect(answer.headers.get('content-type')).toBe('image/png');
      expect(answer.headers.get('content-length')).toBe(String(last - first + 1));
      expect(answer.headers.get('etag')).toBe(etag);
      expect(answer.headers.get('accept-ranges')).toBe('bytes');
      expect((await bytesOf(answer)).equals(PNG.subarray(first, last + 1))).toBe(true);
    });

    it.each([`bytes=${size}-`, `bytes=${size + 5}-${size + 10}`, 'bytes=-0', 'bytes=9-3'])('416 range_not_satisfiable (a MediaError) with Content-Range: bytes */size for Range: %s', async (range) => {
      const answer = await get(pet.id, { Range: range });
      expect(answer.status).toBe(416);
      expect(answer.headers.get('content-range')).toBe(`bytes */${size}`);
      expect(await answer.json()).toEqual({ code: 'range_not_satisfiable', status: 416, message: `No range of the Range lies within the ${size} bytes of the photo; ask for bytes 0 to ${size - 1}.` });
    });

    it.each(['bytes=0-1,5-6', 'bytes=abc', 'bytes=1-2-3', 'items=0-1', 'bytes', 'bytes='])('the whole photo, 200, for Range: %s (apart, not a range, another unit)', async (range) => {
      const answer = await get(pet.id, { Range: range });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-range')).toBeNull();
      expect((await bytesOf(answer)).equals(PNG)).toBe(true);
    });

    it('If-Range: the range while the tag matches exactly; the whole photo for another tag, a weak tag or a date', async () => {
      const partial = await get(pet.id, { Range: 'bytes=0-7', 'If-Range': etag });
      expect(partial.status).toBe(206);
      expect((await bytesOf(partial)).equals(PNG.subarray(0, 8))).toBe(true);
      for (const condition of ['"not-this-one"', `W/${etag}`, 'Tue, 01 Dec 2026 00:00:00 GMT']) {
        const whole = await get(pet.id, { Range: 'bytes=0-7', 'If-Range': condition });
        expect(whole.status, condition).toBe(200);
        expect((await bytesOf(whole)).equals(PNG)).toBe(true);
      }
      // A photo replaced since: the old tag gets the new photo whole.
      await put(pet.id, JPEG, 'image/jpeg');
      const replaced = await get(pet.id, { Range: 'bytes=0-7', 'If-Range': etag });
      expect(replaced.status).toBe(200);
      expect((await bytesOf(replaced)).equals(JPEG)).toBe(true);
      await put(pet.id, PNG, 'image/png');
    });

    it('If-None-Match that matches wins over Range: 304', async () => {
      expect((await get(pet.id, { Range: 'bytes=0-7', 'If-None-Match': etag })).status).toBe(304);
    });

    it('HEAD: the 200\'s headers without a body, Range or not', async () => {
      for (const headers of [{}, { Range: 'bytes=0-7' }] as Record<string, string>[]) {
        const head = await get(pet.id, headers, 'HEAD');
        expect(head.status).toBe(200);
        expect(head.headers.get('content-length')).toBe(String(size));
        expect(head.headers.get('etag')).toBe(etag);
        expect(await head.text()).toBe('');
      }
    });
  });

  describe('createPet as multipart/form-data: the fields of NewPet and an optional photo', () => {
    const form = (fields: Record<string, string>, photo?: { bytes: Buffer; type: string }) => {
      const body = new FormData();
      for (const [name, value] of Object.entries(fields)) body.append(name, value);
      if (photo) body.append('photo', new Blob([new Uint8Array(photo.bytes)], { type: photo.type }), 'photo');
      return t().request('/pets', { method: 'POST', body });
    };

    it('201 with a photo: the animal (status defaulted, categoryId read as a number) and its photo are stored', async () => {
      const created = await form({ name: 'Biscuit', categoryId: '2' }, { bytes: WEBP, type: 'image/webp' });
      expect(created.status, await created.clone().text()).toBe(201);
      const body = (await created.json()) as Pet;
      expect(body).toEqual({ id: expect.any(Number), name: 'Biscuit', categoryId: 2, status: 'available' });
      expect(created.headers.get('location')).toBe(`/v1/pets/${body.id}`);
      const photo = await get(body.id);
      expect(photo.headers.get('content-type')).toBe('image/webp');
      expect((await bytesOf(photo)).equals(WEBP)).toBe(true);
    });

    it('201 without a photo: the animal alone', async () => {
      const created = await form({ name: 'Miso', categoryId: '1', status: 'pending' });
      expect(created.status).toBe(201);
      const body = (await created.json()) as Pet;
      expect(body).toMatchObject({ name: 'Miso', categoryId: 1, status: 'pending' });
      expect((await get(body.id)).status).toBe(404);
    });

    it('refusals store no animal: a photo that is not its type (400 naming photo), of another type (415), over 5 MiB (413), a field that breaks NewPet (400)', async () => {
      const before = await countPets(t());
      const notPng = await form({ name: 'Rex', categoryId: '3' }, { bytes: JPEG, type: 'image/png' });
      expect(notPng.status).toBe(400);
      expect(await notPng.json()).toMatchObject({ code: 'validation_failed', details: [{ in: 'body', field: 'photo', message: 'is not a PNG image: its first bytes are not the PNG signature' }] });
      const gif = await form({ name: 'Rex', categoryId: '3' }, { bytes: Buffer.from('GIF89a'), type: 'image/gif' });
      expect(gif.status).toBe(415);
      expect(await gif.json()).toMatchObject({ code: 'unsupported_media_type' });
      const big = await form({ name: 'Rex', categoryId: '3' }, { bytes: pngOf(LIMIT + 1), type: 'image/png' });
      expect(big.status).toBe(413);
      const badField = await form({ name: 'Rex', categoryId: 'three' }, { bytes: PNG, type: 'image/png' });
      expect(badField.status).toBe(400);
      expect(await badField.json()).toMatchObject({ code: 'validation_failed', details: [expect.objectContaining({ in: 'body', field: 'categoryId' })] });
      expect(await countPets(t())).toBe(before);
    });
  });
}, { socket: true });

describeEachTarget('pet photos through the typed client (client/index.ts): uploads and downloads', (t) => {
  it('uploads a Blob (sent with its own type) or bytes (with a Content-Type), downloads a Blob or an ArrayBuffer, asks for a range', async () => {
    const api = t().client;
    const [pet] = (await addPets(t(), 1)) as [Pet];
    const path = { petId: pet.id };
    const asBlob = await api.putPetPhoto({ params: { path }, body: new Blob([new Uint8Array(JPEG)], { type: 'image/jpeg' }) });
    expect(asBlob.response.status).toBe(204);
    const blob = await api.getPetPhoto({ params: { path }, parseAs: 'blob' });
    expect(blob.data?.type).toBe('image/jpeg');
    expect(Buffer.from(await (blob.data as Blob).arrayBuffer()).equals(JPEG)).toBe(true);
    expect(blob.headers.etag).toMatch(STRONG_TAG);

    const asBytes = await api.PUT('/pets/{petId}/photo', { params: { path }, body: new Uint8Array(PNG) as unknown as Blob, headers: { 'Content-Type': 'image/png' } });
    expect(asBytes.response.status).toBe(204);
    const bytes = await api.getPetPhoto({ params: { path }, parseAs: 'arrayBuffer' });
    expect(Buffer.from(bytes.data as ArrayBuffer).equals(PNG)).toBe(true);

    const part = await api.getPetPhoto({ params: { path, header: { Range: 'bytes=0-7' } }, parseAs: 'arrayBuffer' });
    expect(part.response.status).toBe(206);
    expect(part.headers.contentRange).toBe(`bytes 0-7/${PNG.length}`);
    expect(Buffer.from(part.data as ArrayBuffer).equals(PNG.subarray(0, 8))).toBe(true);
    await expect(api.putPetPhoto({ params: { path }, body: new Uint8Array(PNG) as unknown as Blob })).rejects.toThrow(/needs its media type/);
  });

  it('sends a form (multipart/form-data) from an object: text fields and a photo file', async () => {
    const created = await t().client.createPet({ body: { name: 'Biscuit', categoryId: 2, photo: new File([new Uint8Array(WEBP)], 'biscuit.webp', { type: 'image/webp' }) }, headers: { 'Content-Type': 'multipart/form-data' } });
    expect(created.response.status).toBe(201);
    const id = (created.data as Pet).id;
    const photo = await t().client.getPetPhoto({ params: { path: { petId: id } }, parseAs: 'arrayBuffer' });
    expect(photo.response.headers.get('content-type')).toBe('image/webp');
    expect(Buffer.from(photo.data as ArrayBuffer).equals(WEBP)).toBe(true);
  });
});

describe('one transaction, and the sandbox', () => {
  it('a form whose photo fails to be stored stores no animal either (the unit of work rolls both back)', async () => {
    const t = await injectable({}, (deps) => ({ ...deps, photos: { ...deps.photos, put: () => Promise.reject(new Error('the disk is full')) } }));
    try {
      const form = new FormData();
      form.append('name', 'Lost');
      form.append('categoryId', '1');
      form.append('photo', new Blob([new Uint8Array(PNG)], { type: 'image/png' }), 'lost.png');
      const request = new Request('http://inject/v1/pets', { method: 'POST', body: form });
      const answer = await t.inject({ method: 'POST', url: '/v1/pets', headers: { 'content-type': request.headers.get('content-type') ?? '' }, payload: Buffer.from(await request.arrayBuffer()) });
      expect(answer.statusCode, answer.body).toBe(500);
      expect((await sql<{ n: number }>`select count(*) as n from pets`.execute(t.database.db)).rows[0]?.n).toBe(0);
      // The same form with a store that works: the animal and its photo.
      const stores = openStores({ db: t.database.db, dialect: t.database.dialect, document: loadBundledSpec() });
      expect(await stores.pets.list({ limit: 10 })).toMatchObject({ lastId: undefined });
    } finally {
      await t.close();
    }
  });

  it('the sandbox\'s reset empties the photos with the animals', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-photos-'));
    const database = await openSqlite(join(dir, 'store.sqlite'));
    try {
      const store = createSandboxStore(database, { pets: [{ id: 1, name: 'Biscuit', categoryId: 2, status: 'available' }], created: [] });
      await store.reset();
      const { photos } = openStores({ db: database.db, dialect: database.dialect, document: loadBundledSpec() });
      expect(await photos.put(1, { bytes: PNG, mediaType: 'image/png' })).toBe('stored');
      await store.reset();
      expect((await sql<{ n: number }>`select count(*) as n from pet_photos`.execute(database.db)).rows[0]?.n).toBe(0);
      expect(await photos.get(1)).toEqual({ found: 'no_photo' });
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
