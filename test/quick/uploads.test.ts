/**
 * An upload refused over a real socket (issue 38): the server answers 413 as soon as a body
 * crosses its limit, never reading the rest into memory. With a declared Content-Length over the
 * limit it answers before the client sends a byte of the body; chunked, it answers once the part
 * crosses its `maxLength`, then cuts the connection while the client is still sending. The
 * server here serves the contract plus one made-up multipart operation (its stub's 501 for a
 * valid body). Over node:net: what the client can still send, and when it is cut, is the point.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundledSpec, type OpenApiDocument } from '../../src/shared/spec.js';
import { startTestServer, type TestServer } from '../support/server.js';

const PART_LIMIT = 1024 * 1024;

function withUpload(): OpenApiDocument {
  const document = structuredClone(loadBundledSpec()) as unknown as { paths: Record<string, unknown> };
  document.paths['/examples/upload'] = {
    post: {
      operationId: 'uploadExample',
      summary: 'Upload an example',
      tags: ['Pets'],
      requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', required: ['photo'], properties: { photo: { type: 'string', format: 'binary', maxLength: PART_LIMIT } } } } } },
      responses: { '204': { description: 'Stored.' }, '400': { $ref: '#/components/responses/BadRequest' }, '413': { $ref: '#/components/responses/PayloadTooLarge' }, default: { $ref: '#/components/responses/UnexpectedError' } },
    },
  };
  return document as unknown as OpenApiDocument;
}

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer('sqlite', {}, { document: withUpload() });
});
afterAll(() => t.close());

/** Sends `head`, then `chunk` again and again until the server answers and closes; resolves with its answer and what was sent. */
function sendUntilCut(head: string, chunk: Buffer, most: number): Promise<{ answer: string; sent: number; cut: boolean }> {
  const { port } = new URL(t.origin);
  return new Promise((resolve) => {
    const socket: Socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    let sent = 0;
    let done = false;
    const finish = (cut: boolean) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ answer, sent, cut });
    };
    socket.on('data', (data) => (answer += data.toString('latin1')));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    const pump = () => {
      while (!done && sent < most) {
        sent += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', pump);
          return;
        }
      }
      if (sent >= most) setTimeout(() => finish(false), 5000);
    };
    socket.write(head, pump);
  });
}

describe('an upload over its limit', () => {
  const boundary = 'uploadboundary';
  const partHead = `--${boundary}\r\nContent-Disposition: form-data; name="photo"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`;
  const auth = () => `Authorization: Bearer ${t.key}\r\n`;

  it('a declared Content-Length of 1 GiB: 413 at once, Connection: close, before a byte of the body is sent', async () => {
    const head = `POST /v1/examples/upload HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${1024 ** 3}\r\n\r\n`;
    const { answer, sent } = await sendUntilCut(head, Buffer.alloc(64 * 1024, 1), 0);
    expect(sent).toBe(0);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer).toContain('"code":"payload_too_large"');
  });

  it('chunked, 1 GiB on its way: 413 once the part crosses its maxLength, and the connection is cut long before the rest', async () => {
    const head = `POST /v1/examples/upload HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: multipart/form-data; boundary=${boundary}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const bytes = Buffer.alloc(64 * 1024, 1);
    const chunk = Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]);
    const first = Buffer.from(partHead);
    const { answer, sent, cut } = await sendUntilCut(head + `${first.length.toString(16)}\r\n${first.toString('latin1')}\r\n`, chunk, 1024 ** 3);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    // The part's own limit, or the whole body's (the part's plus its framing), whichever the bytes cross first: both are that limit's 413.
    expect(answer).toMatch(new RegExp(`"message":"The (part \\\\"photo\\\\" of the )?request body is larger than (${PART_LIMIT}|${PART_LIMIT + 16 * 1024}) bytes`));
    console.info(`chunked upload: the server answered 413 and cut the connection after the client had sent ${(sent / 1024 / 1024).toFixed(1)} MiB of 1 GiB`);
    expect(cut).toBe(true);
    expect(sent).toBeLessThan(256 * 1024 * 1024);
  });

  it('a valid upload reaches the operation (its stub answers 501)', async () => {
    const body = `${partHead}${'x'.repeat(1000)}\r\n--${boundary}--\r\n`;
    const response = await fetch(`${t.api}/examples/upload`, { method: 'POST', headers: { Authorization: `Bearer ${t.key}`, 'Content-Type': `multipart/form-data; boundary=${boundary}` }, body });
    expect(response.status).toBe(501);
    expect(await response.json()).toMatchObject({ code: 'not_implemented' });
  });
});
