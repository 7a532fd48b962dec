/**
 * A full disk: the production server (bundled, as a child process) on SQLite, its data on a small
 * disk of its own (a tmpfs in a mount namespace of the server's: ./support/smallDisk.ts) that the
 * test fills while clients write, then frees, never restarting the server:
 *
 *   createPet    creates under way when the disk fills are answered 201 or 503 (an Error body,
 *                code service_unavailable), nothing else; the store then holds exactly the pets
 *                acknowledged, none that was refused; reads go on; once space is freed, creates
 *                succeed again on the same process
 *   putPetPhoto  (contract 1.3.0; skipped until the bundled contract has putPetPhoto and
 *                getPetPhoto) concurrent 1 MiB photo uploads when the disk fills are answered
 *                204 or 503, nothing else; every pet's photo reads back whole, as the last one
 *                stored (or none), never a refused or torn one; once space is freed, uploads
 *                succeed again on the same process
 *
 * Skipped, saying why, where a tmpfs cannot be mounted in a namespace of our own (./support/smallDisk.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { bundledServerArgs } from '../../scripts/lib/bundle.js';
import { allowedVersions, createPets, photoProblems, putPhoto, sentPhoto, type SentPhoto } from './support/photos.js';
import { killAll, type ServerProcess } from './support/server.js';
import { smallDiskMissing, smallDiskStore, startOnSmallDisk, type SmallDisk } from './support/smallDisk.js';
import { isErrorBody, mib, photoOperationsMissing, png, sendBytes, specHasOperation } from './support/uploads.js';

const noDisk = smallDiskMissing();
if (noDisk) console.warn(`[disk full] skipped: ${noDisk}`);
const noPhotos = photoOperationsMissing();
if (noPhotos) console.warn(`[disk full] the photo upload proof is skipped: ${noPhotos}`);
/** The small disk: the store, its WAL and the filler. */
const DISK_MIB = 48;
/** How long, after space is freed, writes may take to succeed again. */
const RECOVERY_MS = 10_000;

afterAll(killAll);

/** Whether `response` is a 503 with the contract's Error body (code service_unavailable). */
function isUnavailable(response: { status: number; body: Buffer }): boolean {
  if (response.status !== 503) return false;
  try {
    const body = JSON.parse(response.body.toString()) as { code?: unknown };
    return isErrorBody(body, 503) && body.code === 'service_unavailable';
  } catch {
    return false;
  }
}

async function onSmallDisk(prefix: string): Promise<{ server: ServerProcess; disk: SmallDisk; key: string }> {
  const store = smallDiskStore(prefix);
  const { server, disk } = await startOnSmallDisk(store, DISK_MIB, bundledServerArgs());
  if (!server.bootstrapKey) throw new Error('the first start on an empty store shows no key');
  return { server, disk, key: server.bootstrapKey };
}

async function json(base: string, key: string, method: string, path: string, body?: unknown) {
  return sendBytes(`${base}${path}`, { method, key, body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)), headers: body === undefined ? {} : { 'content-type': 'application/json' } });
}

/** Every pet's name, by paging through listPets. */
async function storedNames(base: string, key: string): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1_000; page++) {
    const response = await json(base, key, 'GET', `/pets?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(response.status, response.body.toString()).toBe(200);
    names.push(...(JSON.parse(response.body.toString()) as Array<{ name: string }>).map((pet) => pet.name));
    const next = /<([^>]+)>;\s*rel="next"/.exec(String(response.headers.link ?? ''))?.[1];
    if (!next) return names;
    cursor = new URL(next, 'http://x').searchParams.get('cursor') ?? undefined;
  }
  throw new Error('the listing never ends');
}

describe.skipIf(noDisk !== undefined)('a full disk under createPet', () => {
  it('creates are answered 201 or 503, the store holds exactly the acknowledged pets, and creates succeed again once space is freed, without a restart', async () => {
    const { server, disk, key } = await onSmallDisk('disk-full-create');
    const before = await createPets(server.base, key, 20, 'before the fill');
    const filled = disk.fill();
    const outcomes = new Map<string, number>();
    const statuses: Record<string, number> = {};
    // 8 clients, 25 creates each, one after another.
    await Promise.all(
      Array.from({ length: 8 }, async (_, client) => {
        for (let i = 0; i < 25; i++) {
          const name = `full disk c${client} #${i}`;
          const response = await json(server.base, key, 'POST', '/pets', { name, categoryId: 1 });
          outcomes.set(name, response.status);
          statuses[response.status] = (statuses[response.status] ?? 0) + 1;
          if (response.status !== 201) expect(isUnavailable(response), `a create on a full disk: ${response.status} ${response.body.toString()}`).toBe(true);
        }
      }),
    );
    const refused = [...outcomes].filter(([, status]) => status === 503).map(([name]) => name);
    const names = await storedNames(server.base, key);
    disk.free();
    const freedAt = Date.now();
    let recovered: number | undefined;
    while (Date.now() - freedAt < RECOVERY_MS) {
      const response = await json(server.base, key, 'POST', '/pets', { name: `after the fill ${Date.now()}`, categoryId: 2 });
      if (response.status === 201) {
        recovered = Date.now() - freedAt;
        break;
      }
      expect(isUnavailable(response), `a create after the disk was freed: ${response.status} ${response.body.toString()}`).toBe(true);
      await sleep(100);
    }
    const ready = await sendBytes(`http://${server.host}:${server.port}/readyz`);
    console.info(
      `[disk full] createPet: ${mib(filled)} MiB filled the ${DISK_MIB} MiB disk; 200 creates then: ${JSON.stringify(statuses)}; ` +
        `${names.length} pets stored (${before.length} before the fill); creates succeeded again ${recovered ?? 'never'} ms after the space was freed, same process; /readyz ${ready.status}`,
    );
    expect(refused.length, 'the disk never refused a write: the fill did not fill it').toBeGreaterThan(0);
    const acknowledged = [...outcomes].filter(([, status]) => status === 201).map(([name]) => name);
    expect(names.filter((name) => refused.includes(name)), 'pets stored whose create was refused').toEqual([]);
    expect(acknowledged.filter((name) => !names.includes(name)), 'acknowledged pets missing').toEqual([]);
    expect(names.length, 'pets stored twice or from nowhere').toBe(before.length + acknowledged.length);
    expect(recovered, `creates still refused ${RECOVERY_MS} ms after the disk was freed`).toBeDefined();
    expect(ready.status).toBe(200);
    expect(server.proc.running()).toBe(true);
  });
});

describe.skipIf(!specHasOperation('putPetPhoto') || !specHasOperation('getPetPhoto') || noDisk !== undefined)('a full disk during photo uploads (contract 1.3.0)', () => {
  it('uploads are answered 204 or 503, every photo reads back whole as the last one stored, and uploads succeed again once space is freed, without a restart', async () => {
    const { server, disk, key } = await onSmallDisk('disk-full-photos');
    const pets = await createPets(server.base, key, 16, 'photo on a full disk');
    const sent = new Map<number, SentPhoto[]>(pets.map((id) => [id, []]));
    // Half the pets have a photo before the disk fills.
    for (const id of pets.slice(0, 8)) {
      const photo = png(256 * 1024);
      const response = await putPhoto(server.base, key, id, photo);
      expect(response.status, response.body.toString()).toBe(204);
      sent.get(id)!.push(sentPhoto(photo, 'image/png', 'stored'));
    }
    const filled = disk.fill();
    // Every pet gets a 1 MiB photo, all at once, twice over.
    const statuses: Record<string, number> = {};
    for (let round = 0; round < 2; round++) {
      await Promise.all(
        pets.map(async (id) => {
          const photo = png(1024 * 1024);
          let outcome: SentPhoto['outcome'];
          try {
            const response = await putPhoto(server.base, key, id, photo);
            statuses[response.status] = (statuses[response.status] ?? 0) + 1;
            if (response.status !== 204) expect(isUnavailable(response), `an upload on a full disk: ${response.status} ${response.body.toString()}`).toBe(true);
            outcome = response.status === 204 ? 'stored' : 'refused';
          } catch (error) {
            throw new Error(`an upload on a full disk got no answer: ${(error as Error).message}`);
          }
          sent.get(id)!.push(sentPhoto(photo, 'image/png', outcome));
        }),
      );
    }
    const onFull: string[] = [];
    for (const id of pets) onFull.push(...(await photoProblems(server.base, key, id, allowedVersions(sent.get(id)!))).problems);

    disk.free();
    const freedAt = Date.now();
    let recovered: number | undefined;
    const photo = png(1024 * 1024);
    while (Date.now() - freedAt < RECOVERY_MS) {
      const response = await putPhoto(server.base, key, pets[0]!, photo);
      if (response.status === 204) {
        recovered = Date.now() - freedAt;
        sent.get(pets[0]!)!.push(sentPhoto(photo, 'image/png', 'stored'));
        break;
      }
      expect(isUnavailable(response), `an upload after the disk was freed: ${response.status} ${response.body.toString()}`).toBe(true);
      sent.get(pets[0]!)!.push(sentPhoto(photo, 'image/png', 'refused'));
      await sleep(100);
    }
    const afterFree: string[] = [];
    for (const id of pets) afterFree.push(...(await photoProblems(server.base, key, id, allowedVersions(sent.get(id)!))).problems);
    console.info(`[disk full] putPetPhoto: ${mib(filled)} MiB filled the ${DISK_MIB} MiB disk; 32 uploads of 1 MiB then: ${JSON.stringify(statuses)}; uploads succeeded again ${recovered ?? 'never'} ms after the space was freed, same process`);
    expect(statuses['503'] ?? 0, 'the disk never refused an upload: the fill did not fill it').toBeGreaterThan(0);
    expect(onFull, 'photos read back on the full disk').toEqual([]);
    expect(recovered, `uploads still refused ${RECOVERY_MS} ms after the disk was freed`).toBeDefined();
    expect(afterFree, 'photos read back once the disk was freed').toEqual([]);
    expect(server.proc.running()).toBe(true);
  });
});
