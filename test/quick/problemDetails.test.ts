/**
 * Error shapes from the spec (src/http/shapes/problems.ts): a made-up operation that declares RFC 9457
 * Problem Details (`application/problem+json`) for its 4XX and its default gets every refusal the
 * server makes and every error its handler answers as a problem; the pets' operations, which
 * declare our Error, keep it byte for byte. Through the whole list of stages, in process, response
 * checking on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../generated/handlers.js';
import { errorResult, type Handlers } from '../../src/domain/contract.js';
import { loadBundledSpec, type OpenApiDocument } from '../../src/shared/spec.js';
import { injectable, type Injectable } from '../support/inject.js';

const PROBLEM = {
  type: 'object',
  description: 'RFC 9457 Problem Details.',
  properties: {
    type: { type: 'string', format: 'uri-reference' },
    title: { type: 'string' },
    status: { type: 'integer', format: 'int32', minimum: 400, maximum: 599 },
    detail: { type: 'string' },
    instance: { type: 'string' },
  },
  required: ['type', 'title', 'status'],
};

function withProblems(): OpenApiDocument {
  const document = structuredClone(loadBundledSpec()) as unknown as { paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } };
  document.components.schemas.ProblemExample = PROBLEM;
  const problem = { 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemExample' } } };
  document.paths['/examples/stations/{stationId}'] = {
    get: {
      operationId: 'get-station-example',
      summary: 'A station',
      tags: ['Pets'],
      parameters: [{ name: 'stationId', in: 'path', required: true, schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 100 } }],
      responses: {
        '200': { description: 'The station.', content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'integer' } } } } } },
        '4XX': { description: 'A problem of the request.', content: problem },
        default: { description: 'A problem of the server.', content: problem },
      },
    },
  };
  return document as unknown as OpenApiDocument;
}

let t: Injectable;
beforeAll(async () => {
  const getStationExample = async ({ path }: { path: { stationId: number } }) =>
    path.stationId === 13 ? errorResult('not_found', 'No station has id 13.') : { status: 200, body: { id: path.stationId } };
  t = await injectable({ document: withProblems(), handlers: { ...handlers, 'get-station-example': getStationExample } as unknown as Handlers });
});
afterAll(() => t.close());

const TYPE = 'https://animal-store.example/problems/';

describe('Problem Details where the operation declares them', () => {
  it("a handler's errorResult is answered as a problem: application/problem+json, type per code, title, status, detail, instance, and the code", async () => {
    const reply = await t.inject({ method: 'GET', url: '/v1/examples/stations/13' });
    expect(reply.statusCode).toBe(404);
    expect(reply.headers['content-type']).toBe('application/problem+json');
    expect(reply.json()).toEqual({ type: `${TYPE}not_found`, title: 'Not Found', status: 404, detail: 'No station has id 13.', instance: '/v1/examples/stations/13', code: 'not_found' });
  });

  it("the server's own refusals too: a bad parameter (with its details), no key (with its challenge)", async () => {
    const bad = await t.inject({ method: 'GET', url: '/v1/examples/stations/0?x=1' });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toBe('application/problem+json');
    expect(bad.json()).toMatchObject({ type: `${TYPE}validation_failed`, title: 'Bad Request', status: 400, instance: '/v1/examples/stations/0', code: 'validation_failed', details: [{ in: 'path', field: 'stationId' }, { in: 'query', field: 'x' }] });
    const denied = await t.inject({ method: 'GET', url: '/v1/examples/stations/1', auth: false });
    expect(denied.statusCode).toBe(401);
    expect(denied.headers['www-authenticate']).toBe('Bearer realm="animal-store"');
    expect(denied.json()).toMatchObject({ type: `${TYPE}unauthorized`, status: 401, code: 'unauthorized' });
  });

  it('a success is untouched; the pets keep their Error; a path no operation has is our Error (no operation declares anything there)', async () => {
    expect((await t.inject({ method: 'GET', url: '/v1/examples/stations/2' })).json()).toEqual({ id: 2 });
    const pet = await t.inject({ method: 'GET', url: '/v1/pets/999999' });
    expect(pet.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(pet.json()).toMatchObject({ code: 'not_found', status: 404 });
    const nowhere = await t.inject({ method: 'GET', url: '/v1/examples/nowhere' });
    expect(nowhere.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(t.app.violations).toEqual([]);
  });
});
