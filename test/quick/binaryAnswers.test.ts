/**
 * Answers beyond JSON (issue 38): a handler answers bytes as a BinaryBody of a media type the spec
 * declares for that status, and the server sends them with their Content-Type and Content-Length,
 * nosniff and a sandboxing CSP; a conditional read's bytes get a strong ETag and a 304, as JSON
 * does. Bytes of a media type the spec does not declare break the contract (a 500 in test and
 * dev, with the reason). A made-up operation added to the contract, in process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../generated/handlers.js';
import type { Handlers } from '../../src/domain/contract.js';
import { BinaryBody } from '../../src/shared/schemas.js';
import { loadBundledSpec, type OpenApiDocument } from '../../src/shared/spec.js';
import { injectable, type Injectable } from '../support/inject.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 9, 8, 7]);
const binary = { schema: { type: 'string', format: 'binary', maxLength: 1024 } };

function withImage(): OpenApiDocument {
  const document = structuredClone(loadBundledSpec()) as unknown as { paths: Record<string, unknown> };
  const errors = { '401': { $ref: '#/components/responses/Unauthorized' }, default: { $ref: '#/components/responses/UnexpectedError' } };
  document.paths['/examples/image'] = {
    get: {
      operationId: 'imageExample',
      summary: 'An image',
      tags: ['Pets'],
      parameters: [{ name: 'as', in: 'query', schema: { type: 'string', enum: ['png', 'gif'] } }],
      responses: {
        '200': { description: 'The image.', headers: { ETag: { $ref: '#/components/headers/ETag' } }, content: { 'image/png': binary, 'image/jpeg': binary } },
        '304': { description: 'Unchanged.', headers: { ETag: { $ref: '#/components/headers/ETag' } } },
        ...errors,
      },
    },
  };
  return document as unknown as OpenApiDocument;
}

let t: Injectable;
beforeAll(async () => {
  const imageExample = async ({ query }: { query: { as?: string } }) => ({ status: 200, body: new BinaryBody(PNG, query.as === 'gif' ? 'image/gif' : 'image/png') });
  t = await injectable({ document: withImage(), handlers: { ...handlers, imageExample } as unknown as Handlers });
});
afterAll(() => t.close());

describe('bytes a handler answers', () => {
  it('are sent as they are, with their media type, length, nosniff and a sandboxing CSP, and a strong ETag', async () => {
    const response = await t.inject({ method: 'GET', url: '/v1/examples/image' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.rawPayload.equals(PNG)).toBe(true);
    expect(response.headers['content-type']).toBe('image/png');
    expect(response.headers['content-length']).toBe(String(PNG.length));
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'; sandbox");
    expect(response.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(response.headers['cache-control']).toBe('private, no-cache');
  });
  it('a conditional read with the tag: 304, no body, the same tag', async () => {
    const first = await t.inject({ method: 'GET', url: '/v1/examples/image' });
    const again = await t.inject({ method: 'GET', url: '/v1/examples/image', headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    expect(again.headers.etag).toBe(first.headers.etag);
  });
  it('bytes of a media type the spec does not declare for the status break the contract: a 500 saying so', async () => {
    const response = await t.inject({ method: 'GET', url: '/v1/examples/image?as=gif' });
    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'internal_error', message: expect.stringContaining('image/gif, which the spec does not declare') });
    expect(t.app.violations.map((v) => v.operationId)).toEqual(['imageExample']);
  });
});
