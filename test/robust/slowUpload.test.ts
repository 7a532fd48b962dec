/**
 * Uploads sent a byte a second are cut by the request timeout (REQUEST_TIMEOUT_MS, shortened here
 * through the environment; src/config.ts), with a clear outcome: a 408 Error body and a closed
 * connection within the bound, never a hang, a 5xx or a crash. Against the production server
 * (bundled, as a child process) serving the upload fixture operations
 * (./support/uploadOperations.ts), over raw sockets. test/robust/abuse.test.ts proves one slow
 * JSON body; this is the upload path (the raw body reader and busboy) and a crowd of them at once,
 * while honest clients are served as usual.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeUploadServerBundle, startUploadServer } from './support/fixtureServer.js';
import { killAll, sqliteStore, type ServerProcess, type Store } from './support/server.js';
import { header, SocketClient } from './support/socketClient.js';
import { MULTIPART_PET_PATH, RAW_PHOTO_PATH } from './support/uploadOperations.js';
import { isErrorBody, mib, png, rssBytes, sendBytes } from './support/uploads.js';

const HEADERS_TIMEOUT_MS = 2_000;
const REQUEST_TIMEOUT_MS = 4_000;
/** Node scans for expired requests every quarter of the headers timeout (src/transport/listen.ts). */
const CHECK_INTERVAL_MS = HEADERS_TIMEOUT_MS / 4;
/** For a loaded two-core machine: scheduling, the child's event loop, the test's own timers. */
const SLACK_MS = 2_000;
const BOUND_MS = REQUEST_TIMEOUT_MS + CHECK_INTERVAL_MS + SLACK_MS;
/** Slow uploads at once in the crowd test. */
const CROWD = 40;
const BOUNDARY = 'robustslowboundary';

let store: Store;
let server: ServerProcess;
let key: string;
const figures: string[] = [];
const figure = (line: string) => {
  figures.push(line);
  console.info(`[slow upload] ${line}`);
};

beforeAll(async () => {
  store = sqliteStore('slow-upload');
  server = await startUploadServer(store, { HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) });
  if (!server.bootstrapKey) throw new Error('the first start on an empty store shows no key');
  key = server.bootstrapKey;
}, 60_000);

afterAll(async () => {
  if (figures.length) console.info(`[slow upload] figures:\n  ${figures.join('\n  ')}`);
  await killAll();
  await store?.dispose();
  removeUploadServerBundle();
});

interface SlowUpload {
  what: string;
  head: () => string;
  /** The body, of which one byte a second is sent (never all of it). */
  body: Buffer;
}

const photo = png(64 * 1024);
const multipart = Buffer.concat([
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nSlowpoke\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="photo"; filename="slow.png"\r\nContent-Type: image/png\r\n\r\n`),
  photo,
  Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
]);
const common = () => `Host: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${key}\r\n`;
const kinds: readonly SlowUpload[] = [
  { what: 'a raw photo (Content-Length)', body: photo, head: () => `PUT /v1${RAW_PHOTO_PATH} HTTP/1.1\r\n${common()}Content-Type: image/png\r\nContent-Length: ${photo.length}\r\n\r\n` },
  { what: 'a raw photo (chunked)', body: Buffer.concat([Buffer.from(`${photo.length.toString(16)}\r\n`), photo]), head: () => `PUT /v1${RAW_PHOTO_PATH} HTTP/1.1\r\n${common()}Content-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n` },
  { what: 'a multipart pet (Content-Length)', body: multipart, head: () => `POST /v1${MULTIPART_PET_PATH} HTTP/1.1\r\n${common()}Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${multipart.length}\r\n\r\n` },
];

interface Outcome {
  what: string;
  status: number | undefined;
  errorBody: boolean;
  connectionClose: string | undefined;
  closedAfterMs: number | undefined;
  bytesSent: number;
  errorCode: string | undefined;
}

/** Sends the head at once, then the body a byte a second until the server closes the connection or the bound passes. */
async function dribble(upload: SlowUpload): Promise<Outcome> {
  const client = new SocketClient(server.host, server.port);
  await client.write(upload.head());
  for (let i = 0; i < upload.body.length && !client.isClosed() && Date.now() - client.startedAt < BOUND_MS; i++) {
    if (!(await client.write(upload.body.subarray(i, i + 1)))) break;
    await client.waitForClose(1_000);
  }
  await client.waitForClose(Math.max(0, BOUND_MS - (Date.now() - client.startedAt)));
  client.destroy();
  const response = client.response();
  let errorBody = false;
  try {
    errorBody = response !== undefined && isErrorBody(JSON.parse(response.body), response.status) && (JSON.parse(response.body) as { code: string }).code === 'service_unavailable';
  } catch {
    errorBody = false;
  }
  return { what: upload.what, status: response?.status, errorBody, connectionClose: response && header(response, 'connection'), closedAfterMs: client.closedAfterMs, bytesSent: client.bytesWritten, errorCode: client.errorCode };
}

function expectCut(outcome: Outcome): void {
  const what = JSON.stringify(outcome);
  expect(outcome.status, what).toBe(408);
  expect(outcome.errorBody, `${what}: not an Error body with code service_unavailable`).toBe(true);
  expect(outcome.connectionClose, what).toBe('close');
  expect(outcome.closedAfterMs, `${what}: the server never closed the connection`).toBeDefined();
  expect(outcome.closedAfterMs!, what).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
  expect(outcome.closedAfterMs!, what).toBeLessThanOrEqual(BOUND_MS);
}

async function expectServing(): Promise<void> {
  const health = await sendBytes(`http://${server.host}:${server.port}/healthz`);
  expect(health.status).toBe(200);
  const upload = await sendBytes(`${server.base}${RAW_PHOTO_PATH}`, { method: 'PUT', key, body: photo, headers: { 'content-type': 'image/png' } });
  expect(upload.status, upload.body.toString()).toBe(501);
  expect(server.proc.running()).toBe(true);
}

describe('an upload sent a byte a second is cut by the request timeout', () => {
  it.each(kinds.map((kind) => [kind.what, kind] as const))('%s: 408 Error body and a closed connection within REQUEST_TIMEOUT_MS', async (_, kind) => {
    const outcome = await dribble(kind);
    figure(`${kind.what}: ${outcome.status} after ${outcome.closedAfterMs} ms (request timeout ${REQUEST_TIMEOUT_MS} ms), ${outcome.bytesSent} bytes sent`);
    expectCut(outcome);
    await expectServing();
  });

  it(`${CROWD} of them at once: every one is cut with its 408, and honest clients are served meanwhile`, async () => {
    const before = rssBytes(server.pid);
    const began = Date.now();
    const crowd = Promise.all(Array.from({ length: CROWD }, (_, i) => dribble(kinds[i % kinds.length]!)));
    // Honest clients while the crowd dribbles: a photo and a health check every 100 ms, each timed.
    const honest: Array<{ status: number; ms: number }> = [];
    while (Date.now() - began < REQUEST_TIMEOUT_MS + 1_000) {
      const started = Date.now();
      const upload = await sendBytes(`${server.base}${RAW_PHOTO_PATH}`, { method: 'PUT', key, body: photo, headers: { 'content-type': 'image/png' } });
      honest.push({ status: upload.status, ms: Date.now() - started });
      const health = await sendBytes(`http://${server.host}:${server.port}/healthz`);
      honest.push({ status: health.status, ms: Date.now() - started });
      await sleep(100);
    }
    const outcomes = await crowd;
    const after = rssBytes(server.pid);
    const cutAfter = outcomes.map((o) => o.closedAfterMs ?? Number.NaN);
    const slowest = Math.max(...honest.map((h) => h.ms));
    figure(
      `${CROWD} slow uploads at once: statuses ${[...new Set(outcomes.map((o) => o.status))].join(', ')}, cut after ${Math.min(...cutAfter)}–${Math.max(...cutAfter)} ms; ` +
        `${honest.length} honest requests meanwhile, slowest ${slowest} ms, statuses ${[...new Set(honest.map((h) => h.status))].join(', ')}; server RSS ${mib(before)} → ${mib(after)} MiB`,
    );
    outcomes.forEach(expectCut);
    expect(honest.every((h) => h.status === 501 || h.status === 200), JSON.stringify(honest)).toBe(true);
    expect(slowest, 'an honest request waited behind the slow ones').toBeLessThan(2_000);
    await expectServing();
  });
});
