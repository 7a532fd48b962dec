/**
 * Request bodies by media type, from the spec (issue 38): made-up operations of every body kind
 * (a form, multipart with two files and a typed field, raw bytes, a merge patch) added to the
 * contract, and a handler that says what it got. Each kind is read, bounded and validated as the
 * spec declares it; a media type the operation does not declare is a 415 naming those it does;
 * a body over its limit is a 413, before reading when its Content-Length says so; a malformed
 * multipart body is a 400 naming the problem. In process: no socket adds anything here (the
 * transport's own proofs, draining a refused upload, stay in test/quick/connections.test.ts).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../generated/handlers.js';
import type { Handlers } from '../../src/domain/contract.js';
import type { Upload } from '../../src/shared/schemas.js';
import { loadBundledSpec, type OpenApiDocument } from '../../src/shared/spec.js';
import { injectable, type Injectable } from '../support/inject.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex').slice(0, 16);

const errorResponses = {
  '400': { $ref: '#/components/responses/BadRequest' },
  '401': { $ref: '#/components/responses/Unauthorized' },
  '413': { $ref: '#/components/responses/PayloadTooLarge' },
  '415': { $ref: '#/components/responses/UnsupportedMediaType' },
  default: { $ref: '#/components/responses/UnexpectedError' },
};
const echoed = { '200': { description: 'What the handler got.', content: { 'application/json': { schema: {} } } }, ...errorResponses };
const operation = (operationId: string, content: Record<string, unknown>, required = true) => ({ post: { operationId, summary: operationId, tags: ['Pets'], requestBody: { required, content }, responses: echoed } });

/** The working contract plus one made-up operation per body kind. */
function withBodyKinds(): OpenApiDocument {
  const document = structuredClone(loadBundledSpec()) as unknown as { paths: Record<string, unknown> };
  document.paths['/examples/form'] = operation('formExample', {
    'application/x-www-form-urlencoded': {
      schema: { type: 'object', additionalProperties: false, required: ['name', 'count'], properties: { name: { type: 'string', maxLength: 20 }, count: { type: 'integer', minimum: 1, maximum: 9 }, tags: { type: 'array', maxItems: 3, items: { type: 'string', maxLength: 10 } } } },
    },
  });
  document.paths['/examples/upload'] = operation('uploadExample', {
    'multipart/form-data': {
      schema: {
        type: 'object',
        additionalProperties: false,
        required: ['photo', 'count'],
        properties: {
          photo: { type: 'string', format: 'binary', maxLength: 64 },
          notes: { type: 'string', format: 'binary', maxLength: 1024 },
          count: { type: 'integer', minimum: 1, maximum: 9 },
          meta: { type: 'object', additionalProperties: false, properties: { color: { type: 'string', maxLength: 10 }, age: { type: 'integer' } } },
          // No encoding: an object part is application/json by OpenAPI's default.
          size: { type: 'object', additionalProperties: false, properties: { width: { type: 'integer', minimum: 1 } } },
        },
      },
      encoding: { photo: { contentType: 'image/png, image/jpeg' }, meta: { contentType: 'application/json' } },
    },
  });
  document.paths['/examples/raw'] = operation('rawExample', { 'image/*': { schema: { type: 'string', format: 'binary', maxLength: 2048 } } });
  document.paths['/examples/patch'] = operation('patchExample', {
    'application/merge-patch+json': { schema: { type: 'object', additionalProperties: false, properties: { name: { type: ['string', 'null'], maxLength: 20 }, count: { type: 'integer' } } } },
  });
  return document as unknown as OpenApiDocument;
}

/** What the echo handler answers: the media type, and the body with each Upload summed up. */
function described(value: unknown): unknown {
  if (value !== null && typeof value === 'object' && 'bytes' in value && Buffer.isBuffer((value as Upload).bytes)) {
    const upload = value as Upload;
    return { upload: true, size: upload.size, mediaType: upload.mediaType, fileName: upload.fileName ?? null, sha: sha(upload.bytes) };
  }
  if (Array.isArray(value)) return value.map(described);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, described(v)]));
  return value;
}
const echo = async (request: { body: unknown; mediaType: string | undefined }) => ({ status: 200, body: { mediaType: request.mediaType, body: described(request.body) } });

function multipart(parts: Array<{ name?: string; fileName?: string; type?: string; value: string | Buffer }>, boundary = 'b0undary'): { payload: Buffer; headers: Record<string, string> } {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data${part.name === undefined ? '' : `; name="${part.name}"`}${part.fileName === undefined ? '' : `; filename="${part.fileName}"`}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ''}\r\n`), Buffer.from(part.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

let t: Injectable;
beforeAll(async () => {
  const mine = { formExample: echo, uploadExample: echo, rawExample: echo, patchExample: echo };
  t = await injectable({ document: withBodyKinds(), handlers: { ...handlers, ...mine } as unknown as Handlers });
});
afterAll(() => t.close());

const post = (url: string, payload: string | Buffer, headers: Record<string, string>) => t.inject({ method: 'POST', url: `/v1${url}`, payload, headers });
const json = (response: { body: string }) => JSON.parse(response.body) as Record<string, unknown>;

describe('a form (application/x-www-form-urlencoded)', () => {
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  it('is decoded and its fields coerced by their schema; an array field collects every value', async () => {
    const response = await post('/examples/form', 'name=Biscuit+the+cat&count=3&tags=a&tags=b%21', form);
    expect(response.statusCode, response.body).toBe(200);
    expect(json(response)).toEqual({ mediaType: 'application/x-www-form-urlencoded', body: { name: 'Biscuit the cat', count: 3, tags: ['a', 'b!'] } });
  });
  it('a field that breaks its schema, a missing one, a number not in plain decimal, a field sent twice: 400 naming it', async () => {
    expect(json(await post('/examples/form', 'name=Biscuit&count=12', form))).toMatchObject({ code: 'validation_failed', details: [{ in: 'body', field: 'count' }] });
    expect(json(await post('/examples/form', 'name=Biscuit', form))).toMatchObject({ code: 'validation_failed', details: [{ in: 'body', field: 'count', message: 'is required' }] });
    expect(json(await post('/examples/form', 'name=Biscuit&count=0x3', form))).toMatchObject({ code: 'validation_failed', details: [{ field: 'count' }] });
    expect(json(await post('/examples/form', 'name=A&name=B&count=1', form))).toMatchObject({ status: 400, code: 'validation_failed', details: [{ field: 'name', message: 'is sent more than once; it takes one value' }] });
  });
  it('JSON sent to it: 415 naming the media type it takes', async () => {
    const response = await post('/examples/form', '{"name":"Biscuit","count":3}', { 'content-type': 'application/json' });
    expect(response.statusCode).toBe(415);
    expect(json(response)).toMatchObject({ code: 'unsupported_media_type', message: expect.stringContaining('application/x-www-form-urlencoded') });
  });
});

describe('multipart/form-data with two files and a typed field', () => {
  it('file parts arrive as Uploads (bytes, size, media type, file name), text fields coerced by their schema', async () => {
    const { payload, headers } = multipart([
      { name: 'count', value: '2' },
      { name: 'photo', fileName: 'C:\\pets\\biscuit.png', type: 'image/png', value: PNG },
      { name: 'notes', fileName: 'notes.txt', type: 'text/plain', value: 'likes naps' },
    ]);
    const response = await post('/examples/upload', payload, headers);
    expect(response.statusCode, response.body).toBe(200);
    expect(json(response)).toEqual({
      mediaType: 'multipart/form-data',
      body: {
        count: 2,
        photo: { upload: true, size: PNG.length, mediaType: 'image/png', fileName: 'biscuit.png', sha: sha(PNG) },
        notes: { upload: true, size: 10, mediaType: 'text/plain', fileName: 'notes.txt', sha: sha(Buffer.from('likes naps')) },
      },
    });
  });
  it('a field whose encoding is JSON is parsed as JSON (as text, or as a part with a filename, as a browser sends a Blob) and never coerced', async () => {
    for (const meta of [{ name: 'meta', value: '{"color":"ginger","age":3}' }, { name: 'meta', fileName: 'blob', type: 'application/json', value: '{"color":"ginger","age":3}' }]) {
      const { payload, headers } = multipart([{ name: 'count', value: '1' }, { name: 'photo', fileName: 'p.png', type: 'image/png', value: PNG }, meta]);
      const response = await post('/examples/upload', payload, headers);
      expect(response.statusCode, response.body).toBe(200);
      expect(json(response)).toMatchObject({ body: { meta: { color: 'ginger', age: 3 } } });
    }
    const notJson = multipart([{ name: 'count', value: '1' }, { name: 'photo', fileName: 'p.png', type: 'image/png', value: PNG }, { name: 'meta', value: '{"color":' }]);
    expect(json(await post('/examples/upload', notJson.payload, notJson.headers))).toMatchObject({ status: 400, details: [{ field: 'meta', message: 'is not valid JSON (its encoding is application/json)' }] });
    const uncoerced = multipart([{ name: 'count', value: '1' }, { name: 'photo', fileName: 'p.png', type: 'image/png', value: PNG }, { name: 'meta', value: '{"age":"3"}' }]);
    expect(json(await post('/examples/upload', uncoerced.payload, uncoerced.headers))).toMatchObject({ status: 400, details: [{ field: 'meta.age' }] });
  });
  it('an object part without an encoding is JSON too, as OpenAPI defaults it (not text coerced into an object, which never validates)', async () => {
    const { payload, headers } = multipart([{ name: 'count', value: '1' }, { name: 'photo', fileName: 'p.png', type: 'image/png', value: PNG }, { name: 'size', value: '{"width":3}' }]);
    const response = await post('/examples/upload', payload, headers);
    expect(response.statusCode, response.body).toBe(200);
    expect(json(response)).toMatchObject({ body: { size: { width: 3 } } });
    const refused = multipart([{ name: 'count', value: '1' }, { name: 'photo', fileName: 'p.png', type: 'image/png', value: PNG }, { name: 'size', value: '{"width":"3"}' }]);
    expect(json(await post('/examples/upload', refused.payload, refused.headers))).toMatchObject({ status: 400, details: [{ field: 'size.width' }] });
  });
  it('a required file part missing: 400 naming it', async () => {
    const { payload, headers } = multipart([{ name: 'count', value: '2' }]);
    expect(json(await post('/examples/upload', payload, headers))).toMatchObject({ code: 'validation_failed', details: [{ in: 'body', field: 'photo', message: 'is required' }] });
  });
  it('a file part over its maxLength: 413 naming the part', async () => {
    const { payload, headers } = multipart([{ name: 'count', value: '2' }, { name: 'photo', fileName: 'big.png', type: 'image/png', value: Buffer.alloc(65, 1) }]);
    const response = await post('/examples/upload', payload, headers);
    expect(response.statusCode).toBe(413);
    expect(json(response)).toMatchObject({ code: 'payload_too_large', message: expect.stringContaining('"photo"') });
  });
  it('a file part of a media type its encoding does not list: 415 naming the part and the types', async () => {
    const { payload, headers } = multipart([{ name: 'photo', fileName: 'p.gif', type: 'image/gif', value: 'GIF89a' }, { name: 'count', value: '2' }]);
    const response = await post('/examples/upload', payload, headers);
    expect(response.statusCode).toBe(415);
    expect(json(response)).toMatchObject({ code: 'unsupported_media_type', message: expect.stringMatching(/"photo".*image\/gif.*image\/png or image\/jpeg/) });
  });
  it('malformed: no boundary, never closed, a nameless part, a text field where a file is declared: 400 naming the problem', async () => {
    const good = multipart([{ name: 'count', value: '2' }]);
    const noBoundary = await post('/examples/upload', good.payload, { 'content-type': 'multipart/form-data' });
    expect(json(noBoundary)).toMatchObject({ status: 400, code: 'validation_failed', message: expect.stringContaining('no boundary') });
    const unclosed = await post('/examples/upload', good.payload.subarray(0, good.payload.length - 14), good.headers);
    expect(json(unclosed)).toMatchObject({ status: 400, code: 'validation_failed', message: expect.stringContaining('before its closing boundary') });
    const nameless = multipart([{ value: 'x' }, { name: 'count', value: '2' }]);
    expect(json(await post('/examples/upload', nameless.payload, nameless.headers))).toMatchObject({ status: 400, message: expect.stringContaining('has no name') });
    const textForFile = multipart([{ name: 'photo', value: 'not a file' }, { name: 'count', value: '2' }]);
    expect(json(await post('/examples/upload', textForFile.payload, textForFile.headers))).toMatchObject({ status: 400, details: [{ field: 'photo', message: 'must be a file part (a part with a filename)' }] });
  });
  it('more parts than the schema can take: 413', async () => {
    const { payload, headers } = multipart(Array.from({ length: 10 }, (_, i) => ({ name: `extra${i}`, value: 'x' })));
    const response = await post('/examples/upload', payload, headers);
    expect(response.statusCode).toBe(413);
    expect(json(response)).toMatchObject({ code: 'payload_too_large', message: expect.stringContaining('more parts') });
  });
});

describe('a raw body (image/*)', () => {
  it('arrives as an Upload with the request\'s own media type', async () => {
    const response = await post('/examples/raw', PNG, { 'content-type': 'image/png' });
    expect(response.statusCode, response.body).toBe(200);
    expect(json(response)).toEqual({ mediaType: 'image/png', body: { upload: true, size: PNG.length, mediaType: 'image/png', fileName: null, sha: sha(PNG) } });
  });
  it('over its maxLength: 413, and a declared Content-Length over it is refused before reading', async () => {
    const over = await post('/examples/raw', Buffer.alloc(2049, 7), { 'content-type': 'image/webp' });
    expect(over.statusCode).toBe(413);
    expect(json(over)).toMatchObject({ code: 'payload_too_large', message: 'The request body is larger than 2048 bytes.' });
  });
  it('a type outside the range: 415 naming it', async () => {
    const response = await post('/examples/raw', 'hello', { 'content-type': 'text/plain' });
    expect(response.statusCode).toBe(415);
    expect(json(response)).toMatchObject({ message: expect.stringContaining('image/*') });
  });
});

describe('a merge patch (application/merge-patch+json)', () => {
  it('is parsed as JSON and validated as JSON (never coerced)', async () => {
    const ok = await post('/examples/patch', '{"name":null,"count":2}', { 'content-type': 'application/merge-patch+json' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(json(ok)).toEqual({ mediaType: 'application/merge-patch+json', body: { name: null, count: 2 } });
    expect(json(await post('/examples/patch', '{"count":"2"}', { 'content-type': 'application/merge-patch+json' }))).toMatchObject({ code: 'validation_failed', details: [{ in: 'body', field: 'count' }] });
    expect(json(await post('/examples/patch', '{"count":', { 'content-type': 'application/merge-patch+json' }))).toMatchObject({ code: 'invalid_json' });
  });
});

it('no response broke the contract on the way', () => {
  expect(t.app.violations).toEqual([]);
});
