/**
 * Memory grows with the uploads in flight, never with the bytes refused: against the production
 * server (bundled, as a child process) serving the upload fixture operations (a raw photo up to
 * 5 MiB, and a multipart pet with a photo part up to 5 MiB; ./support/uploadOperations.ts), over
 * raw sockets:
 *
 *   refused   a 1 GiB upload, raw or multipart, with a declared Content-Length or chunked, sent as
 *             fast as the socket takes it: a 413 Error within seconds, the connection ended long
 *             before the gigabyte, and the server's RSS (from /proc) within 64 MiB of where it
 *             was, at its peak and after; the same for eight such uploads at once
 *   in flight eight valid 5 MiB uploads held open one byte short of their end: the server's RSS
 *             grows by at most what they are allowed to hold (their limits, twice over for the
 *             copy a reader makes, plus slack), and each reaches its operation once finished
 *   a flood   48 multipart pets whose photo is one byte over its 5 MiB limit, eight at a time:
 *             each is in flight until its part crosses the limit, so the server's RSS may grow by
 *             what eight in flight may hold (as above), never by what 48 were sent: a refused
 *             part's bytes are dropped at the refusal (its Error's stack trace, kept while the
 *             answer drains, would otherwise keep them: 240 MiB of them, before the fix)
 *   lingering against the server `npm start` ships (dist/, the real contract): putPetPhoto
 *             (`PUT /v1/pets/{petId}/photo`, up to 5 MiB) declaring 1 GiB, and 5 MiB + 1 byte, is
 *             answered 413 before its body is read, then the connection closes lingering
 *             (src/http/bodies/unread.ts): node:http streaming the body reads its 413 Error, no reset; a
 *             client that sends its whole 1 GiB body before it stops has every byte taken and
 *             reads its 413 too; the server's RSS stays within 64 MiB of where it was
 *
 * The bounds are generous on purpose (a busy two-core machine); every figure is printed.
 */
import { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeUploadServerBundle, startUploadServer } from './support/fixtureServer.js';
import { createPets, photoUrl } from './support/photos.js';
import { killAll, postgresStore, sqliteStore, startServerProcess, stopServer, type ServerProcess, type Store } from './support/server.js';
import { MULTIPART_PET_PATH, PHOTO_LIMIT, RAW_PHOTO_PATH } from './support/uploadOperations.js';
import { flood, isErrorBody, jsonBodyOf, mib, multipartBody, photoOperationsMissing, png, rssBytes, sampleRss, sendBytes, statusOf, streamBody, type Flood } from './support/uploads.js';

const GIB = 1024 ** 3;
/** Growth of the server's RSS allowed while refusing (peak and after). */
const REFUSED_GROWTH = 64 * 2 ** 20;
/** Seconds within which a refused upload must have its 413. */
const ANSWER_WITHIN_MS = 5_000;
/** Uploads held in flight at once. */
const IN_FLIGHT = 8;
const BOUNDARY = 'robustmemoryboundary';

let store: Store;
let server: ServerProcess;
let key: string;
/** The server's RSS once warmed up, before any proof. */
let startRss: number;
const figures: string[] = [];
const figure = (line: string) => {
  figures.push(line);
  console.info(`[upload memory] ${line}`);
};

beforeAll(async () => {
  store = sqliteStore('upload-memory');
  server = await startUploadServer(store);
  if (!server.bootstrapKey) throw new Error('the first start on an empty store shows no key');
  key = server.bootstrapKey;
  // Warm up every path these proofs take, so the first measurement is not of code loading.
  const photo = png(64 * 1024);
  for (let i = 0; i < 5; i++) {
    expect((await sendBytes(`${server.base}${RAW_PHOTO_PATH}`, { method: 'PUT', key, body: photo, headers: { 'content-type': 'image/png' } })).status).toBe(501);
    await refuse(uploads[i % uploads.length]!);
  }
  startRss = await settledRss();
}, 60_000);

afterAll(async () => {
  if (figures.length) console.info(`[upload memory] figures:\n  ${figures.join('\n  ')}`);
  await killAll();
  await store?.dispose();
  removeUploadServerBundle();
});

interface Upload {
  what: string;
  head: () => string;
  /** What is sent over and over after the head. */
  chunk: Buffer;
}

const auth = () => `Authorization: Bearer ${key}\r\n`;
const host = () => `Host: 127.0.0.1:${server.port}\r\n`;
const zeros = Buffer.alloc(256 * 1024);
/** One chunk of a chunked body, framed. */
const framed = (bytes: Buffer) => Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]);
const partHead = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nBiscuit\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="categoryId"\r\n\r\n2\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="photo"; filename="huge.png"\r\nContent-Type: image/png\r\n\r\n`;

const uploads: readonly Upload[] = [
  { what: 'raw photo, Content-Length: 1 GiB', chunk: zeros, head: () => `PUT /v1${RAW_PHOTO_PATH} HTTP/1.1\r\n${host()}${auth()}Content-Type: image/png\r\nContent-Length: ${GIB}\r\n\r\n` },
  { what: 'raw photo, chunked, 1 GiB', chunk: framed(zeros), head: () => `PUT /v1${RAW_PHOTO_PATH} HTTP/1.1\r\n${host()}${auth()}Content-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n` },
  { what: 'multipart pet, Content-Length: 1 GiB', chunk: zeros, head: () => `POST /v1${MULTIPART_PET_PATH} HTTP/1.1\r\n${host()}${auth()}Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${GIB}\r\n\r\n${partHead}` },
  {
    what: 'multipart pet, chunked, 1 GiB',
    chunk: framed(zeros),
    head: () => `POST /v1${MULTIPART_PET_PATH} HTTP/1.1\r\n${host()}${auth()}Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nTransfer-Encoding: chunked\r\n\r\n${framed(Buffer.from(partHead, 'latin1')).toString('latin1')}`,
  },
];

const refuse = (upload: Upload): Promise<Flood> => flood(server.host, server.port, upload.head(), upload.chunk, GIB, 30_000);

async function settledRss(): Promise<number> {
  await sleep(300);
  return rssBytes(server.pid);
}

function expect413(upload: Upload, result: Flood): void {
  const what = `${upload.what}: ${result.answer.slice(0, 300) || `no answer (${result.errorCode ?? 'closed'})`}`;
  expect(statusOf(result.answer), what).toBe(413);
  expect(isErrorBody(jsonBodyOf(result.answer), 413), what).toBe(true);
  expect((jsonBodyOf(result.answer) as { code?: string }).code, what).toBe('payload_too_large');
  expect(result.answeredAfterMs, what).toBeLessThan(ANSWER_WITHIN_MS);
  // Ended long before the gigabyte: the server half-closes after its answer, and this client,
  // which reads while it sends, stops and closes (the lingering close: src/http/bodies/unread.ts).
  expect(result.closedAfterMs, `${what}: the server never closed the connection`).toBeDefined();
  expect(result.sent, what).toBeLessThan(256 * 2 ** 20);
}

describe('a 1 GiB upload is refused with 413 within seconds, and costs the server no memory', () => {
  it.each(uploads.map((upload) => [upload.what, upload] as const))('%s', async (_, upload) => {
    const before = await settledRss();
    const sampler = sampleRss(server.pid);
    const result = await refuse(upload);
    const after = await settledRss();
    const { peak } = sampler.stop();
    figure(
      `${upload.what}: 413 after ${result.answeredAfterMs} ms with ${mib(result.sentBeforeAnswer ?? 0)} MiB of the body sent; cut after ${result.closedAfterMs} ms and ${mib(result.sent)} MiB ` +
        `(${result.errorCode ?? 'closed'}); server RSS ${mib(before)} → peak ${mib(peak)} → ${mib(after)} MiB`,
    );
    expect413(upload, result);
    expect(peak - before, `RSS grew by ${mib(peak - before)} MiB refusing ${upload.what}`).toBeLessThan(REFUSED_GROWTH);
    expect(after - before).toBeLessThan(REFUSED_GROWTH);
    expect(server.proc.running()).toBe(true);
  });

  it(`${IN_FLIGHT} of them at once, two of each kind: every one is refused, the memory stays`, async () => {
    const before = await settledRss();
    const sampler = sampleRss(server.pid);
    const all = Array.from({ length: IN_FLIGHT }, (_, i) => uploads[i % uploads.length]!);
    const results = await Promise.all(all.map(refuse));
    const after = await settledRss();
    const { peak } = sampler.stop();
    const sent = results.reduce((sum, r) => sum + r.sent, 0);
    figure(`${IN_FLIGHT} × 1 GiB at once: statuses ${results.map((r) => statusOf(r.answer) ?? r.errorCode).join(', ')}; ${mib(sent)} MiB sent in all before the cuts; server RSS ${mib(before)} → peak ${mib(peak)} → ${mib(after)} MiB`);
    results.forEach((result, i) => expect413(all[i]!, result));
    expect(peak - before).toBeLessThan(REFUSED_GROWTH);
    expect(after - before).toBeLessThan(REFUSED_GROWTH);
    // Every refusal of this file so far, some 12 GiB offered: the server is still where it started.
    figure(`after every refusal: server RSS ${mib(after)} MiB against ${mib(startRss)} MiB once warmed up`);
    expect(after - startRss).toBeLessThan(REFUSED_GROWTH);
  });
});

describe('memory grows with the uploads in flight, within their limits', () => {
  it(`${IN_FLIGHT} valid 5 MiB photos held one byte short of their end: RSS grows by at most their limits (×2) and they reach the operation`, async () => {
    const photos = Array.from({ length: IN_FLIGHT }, () => png(PHOTO_LIMIT - 1024));
    const before = await settledRss();
    const sampler = sampleRss(server.pid);
    const sockets = photos.map(() => new Socket().connect(server.port, server.host));
    const answers = sockets.map(
      (socket) =>
        new Promise<string>((resolve) => {
          let text = '';
          socket.on('data', (data: Buffer) => {
            text += data.toString('latin1');
            // The stub's 501 is one small answer: whole once its JSON body has arrived.
            if (jsonBodyOf(text) !== undefined) resolve(text);
          });
          socket.on('error', () => resolve(text));
          socket.on('close', () => resolve(text));
        }),
    );
    await Promise.all(
      sockets.map(
        (socket, i) =>
          new Promise<void>((resolve) => {
            const photo = photos[i]!;
            socket.write(`PUT /v1${RAW_PHOTO_PATH} HTTP/1.1\r\n${host()}${auth()}Content-Type: image/png\r\nContent-Length: ${photo.length}\r\n\r\n`);
            socket.write(photo.subarray(0, -1), () => resolve());
          }),
      ),
    );
    // Every byte but the last has been handed over: let the server take them in.
    await sleep(1_000);
    const held = rssBytes(server.pid);
    sockets.forEach((socket, i) => socket.write(photos[i]!.subarray(-1)));
    const statuses = (await Promise.all(answers)).map(statusOf);
    sockets.forEach((socket) => socket.destroy());
    const after = await settledRss();
    const { peak } = sampler.stop();
    const allowed = IN_FLIGHT * PHOTO_LIMIT * 2 + 32 * 2 ** 20;
    figure(
      `${IN_FLIGHT} × ${mib(PHOTO_LIMIT)} MiB photos in flight: server RSS ${mib(before)} → ${mib(held)} MiB held (+${mib(held - before)}), peak ${mib(peak)} (+${mib(peak - before)}; ` +
        `bound +${mib(allowed)}), ${mib(after)} after; answers ${statuses.join(', ')}`,
    );
    expect(statuses).toEqual(photos.map(() => 501));
    expect(peak - before).toBeLessThan(allowed);
    expect(server.proc.running()).toBe(true);
  });
});

describe('a flood of parts refused at their limit', () => {
  it(`48 multipart pets whose photo is one byte over its limit, ${IN_FLIGHT} at a time: each a 413, and RSS grows by at most what ${IN_FLIGHT} in flight may hold`, async () => {
    const boundary = 'robustfloodboundary';
    const body = multipartBody([{ name: 'name', value: 'Biscuit' }, { name: 'categoryId', value: '2' }, { name: 'photo', fileName: 'big.png', type: 'image/png', value: Buffer.alloc(PHOTO_LIMIT + 1, 7) }], boundary);
    const before = await settledRss();
    const sampler = sampleRss(server.pid);
    const statuses: number[] = [];
    for (let round = 0; round < 6; round++) {
      const answers = await Promise.all(Array.from({ length: IN_FLIGHT }, () => sendBytes(`${server.base}${MULTIPART_PET_PATH}`, { method: 'POST', key, body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } })));
      statuses.push(...answers.map((a) => a.status));
    }
    const after = await settledRss();
    const { peak } = sampler.stop();
    figure(`48 photos refused at their limit (${mib(48 * PHOTO_LIMIT)} MiB read before the refusals): server RSS ${mib(before)} → peak ${mib(peak)} (+${mib(peak - before)}) → ${mib(after)} MiB`);
    expect(statuses).toEqual(statuses.map(() => 413));
    expect(peak - before).toBeLessThan(IN_FLIGHT * PHOTO_LIMIT * 2 + 32 * 2 ** 20);
    expect(after - before).toBeLessThan(REFUSED_GROWTH);
    expect(server.proc.running()).toBe(true);
  });
});

const postgresUrl = process.env.DATABASE_URL || undefined;
/** The stores the lingering proofs run on: SQLite always; PostgreSQL when DATABASE_URL is set. */
const lingeringStores: Array<[string, () => Promise<Store>]> = [['sqlite', async () => sqliteStore('upload-lingering')]];
if (postgresUrl) lingeringStores.push(['postgres', () => postgresStore(postgresUrl, 'upload_lingering')]);

describe.each(lingeringStores)('a photo refused on its declared length closes lingering: the client reads its 413 (the server npm start ships, %s)', (_, makeStore) => {
  const noPhotos = photoOperationsMissing();
  let realStore: Store;
  let real: ServerProcess;
  let realKey: string;
  let photoPath: string;
  /** The 413 putPetPhoto answers, read by both clients, and what it must be. */
  const expectPhoto413 = (status: number | undefined, body: unknown, what: string) => {
    expect(status, what).toBe(413);
    expect(isErrorBody(body, 413), what).toBe(true);
    expect((body as { code?: string }).code, what).toBe('payload_too_large');
  };
  const realRss = async () => {
    await sleep(300);
    return rssBytes(real.pid);
  };

  beforeAll(async () => {
    if (noPhotos) return;
    realStore = await makeStore();
    real = await startServerProcess(realStore);
    if (!real.bootstrapKey) throw new Error('the first start on an empty store shows no key');
    realKey = real.bootstrapKey;
    const [petId] = await createPets(real.base, realKey, 1, 'Lingering');
    photoPath = new URL(photoUrl(real.base, petId!)).pathname;
    // Warm up the refusal, so the first measurement is not of code loading.
    for (let i = 0; i < 3; i++) await streamBody(url(), { method: 'PUT', key: realKey, contentType: 'image/png', length: PHOTO_LIMIT + 1, chunk: zeros });
  }, 60_000);
  afterAll(async () => {
    if (real) await stopServer(real);
    await realStore?.dispose();
  });

  const url = () => `http://${real.host}:${real.port}${photoPath}`;
  const head = (length: number) => `PUT ${photoPath} HTTP/1.1\r\nHost: ${real.host}:${real.port}\r\nAuthorization: Bearer ${realKey}\r\nContent-Type: image/png\r\nContent-Length: ${length}\r\n\r\n`;

  it.skipIf(noPhotos)(`node:http streaming 1 GiB of zeros, Content-Length: 1 GiB: it reads its 413 Error, never a reset, and the server's RSS stays within ${mib(REFUSED_GROWTH)} MiB`, async () => {
    const before = await realRss();
    const sampler = sampleRss(real.pid);
    const result = await streamBody(url(), { method: 'PUT', key: realKey, contentType: 'image/png', length: GIB, chunk: zeros });
    const after = await realRss();
    const { peak } = sampler.stop();
    figure(
      `node:http, putPetPhoto Content-Length 1 GiB: ${result.status ?? 'no answer'} after ${result.answeredAfterMs} ms with ${mib(result.sentBeforeAnswer ?? 0)} MiB handed to node:http; ` +
        `it stopped after ${mib(result.sent)} MiB, ended after ${result.endedAfterMs} ms (${result.errorCode ?? 'no error'}); server RSS ${mib(before)} → peak ${mib(peak)} → ${mib(after)} MiB`,
    );
    expect(result.errorBeforeAnswer, `the client lost its answer to ${result.errorCode}`).toBe(false);
    expect(result.complete).toBe(true);
    expectPhoto413(result.status, JSON.parse(result.body.toString()), 'node:http, 1 GiB');
    expect(result.answeredAfterMs).toBeLessThan(ANSWER_WITHIN_MS);
    expect(peak - before).toBeLessThan(REFUSED_GROWTH);
    expect(after - before).toBeLessThan(REFUSED_GROWTH);
  });

  it.skipIf(noPhotos)(`a client that sends its whole 1 GiB body (raw socket, half-open) has every byte taken and reads its 413 Error; the server's RSS stays within ${mib(REFUSED_GROWTH)} MiB`, async () => {
    const before = await realRss();
    const sampler = sampleRss(real.pid);
    const result = await flood(real.host, real.port, head(GIB), zeros, GIB, 60_000, true);
    const after = await realRss();
    const { peak } = sampler.stop();
    figure(
      `whole 1 GiB to putPetPhoto: ${statusOf(result.answer) ?? 'no answer'} after ${result.answeredAfterMs} ms with ${mib(result.sentBeforeAnswer ?? 0)} MiB sent; ${mib(result.sent)} MiB sent in all, ` +
        `connection ended after ${result.closedAfterMs} ms (${result.errorCode ?? 'no error'}); server RSS ${mib(before)} → peak ${mib(peak)} → ${mib(after)} MiB`,
    );
    expect(result.errorCode, 'a reset: the server cut the connection under the client').toBeUndefined();
    expect(result.sent).toBe(GIB);
    expectPhoto413(statusOf(result.answer), jsonBodyOf(result.answer), 'whole 1 GiB');
    expect(result.answeredAfterMs).toBeLessThan(ANSWER_WITHIN_MS);
    expect(result.closedAfterMs).toBeDefined();
    expect(peak - before).toBeLessThan(REFUSED_GROWTH);
    expect(after - before).toBeLessThan(REFUSED_GROWTH);
  });

  it.skipIf(noPhotos)('5 MiB + 1 byte, 20 times with each client: every one reads its 413 Error, never a reset', async () => {
    const length = PHOTO_LIMIT + 1;
    const outcomes: string[] = [];
    for (let i = 0; i < 20; i++) {
      const streamed = await streamBody(url(), { method: 'PUT', key: realKey, contentType: 'image/png', length, chunk: zeros });
      expect(streamed.errorBeforeAnswer, `node:http, attempt ${i + 1}: the client lost its answer to ${streamed.errorCode}`).toBe(false);
      expectPhoto413(streamed.status, JSON.parse(streamed.body.toString()), `node:http, attempt ${i + 1}`);
      const whole = await flood(real.host, real.port, head(length), zeros, length, 30_000, true);
      expect(whole.errorCode, `whole, attempt ${i + 1}`).toBeUndefined();
      expect(whole.sent, `whole, attempt ${i + 1}`).toBe(length);
      expectPhoto413(statusOf(whole.answer), jsonBodyOf(whole.answer), `whole, attempt ${i + 1}`);
      outcomes.push(`${streamed.status}/${mib(streamed.sent)}`, `${statusOf(whole.answer)}/${whole.closedAfterMs}ms`);
    }
    figure(`5 MiB + 1 byte to putPetPhoto, node:http (status/MiB handed over) and whole-body (status/ended after) in turn: ${outcomes.join(', ')}`);
    expect(real.proc.running()).toBe(true);
  });
});
