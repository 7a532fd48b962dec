/**
 * Representations by content negotiation (src/http/shapes/representations.ts, xml.ts,
 * src/pipeline/negotiate.ts): made-up operations that declare JSON and XML for their answers,
 * Problem Details in JSON and XML for their errors, and an XML request body, described by the
 * schemas' `xml` objects. The answer follows `Accept` (q-values, wildcards, the first declared
 * without one) with `Vary: Accept` and an ETag per representation; none acceptable is a 406 in
 * the declared error shape; an XML body is read into its schema's fields and coerced as a form's,
 * and a DOCTYPE, an undefined entity or a malformed document is a 400. The pets answer as before.
 * Through the whole list of stages, in process, response checking on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../generated/handlers.js';
import type { Handlers } from '../../src/domain/contract.js';
import { loadBundledSpec, type OpenApiDocument } from '../../src/shared/spec.js';
import { injectable, type Injectable } from '../support/inject.js';

const PROBLEM = {
  type: 'object',
  description: 'RFC 9457 Problem Details.',
  properties: { type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' }, instance: { type: 'string' } },
  required: ['type', 'title', 'status'],
};

const SHELTER = {
  type: 'object',
  description: 'A shelter, in JSON or XML.',
  required: ['id', 'name'],
  additionalProperties: false,
  xml: { name: 'shelter', namespace: 'https://animal-store.example/xml', prefix: 'as' },
  properties: {
    id: { type: 'integer', minimum: 1, maximum: 1000, xml: { attribute: true } },
    name: { type: 'string', maxLength: 40 },
    open: { type: 'boolean' },
    kinds: { type: 'array', maxItems: 5, xml: { wrapped: true }, items: { type: 'string', maxLength: 20, xml: { name: 'kind' } } },
    phones: { type: 'array', maxItems: 3, items: { type: 'string', maxLength: 20, xml: { name: 'phone' } } },
  },
};

function withRepresentations(): OpenApiDocument {
  const document = structuredClone(loadBundledSpec()) as unknown as { paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } };
  document.components.schemas.ProblemExample = PROBLEM;
  document.components.schemas.ShelterExample = SHELTER;
  const shelter = { schema: { $ref: '#/components/schemas/ShelterExample' } };
  const problem = { schema: { $ref: '#/components/schemas/ProblemExample' } };
  const problems = { description: 'A problem.', content: { 'application/problem+json': problem, 'application/problem+xml': problem } };
  document.paths['/examples/shelters/{shelterId}'] = {
    get: {
      operationId: 'get-shelter-example',
      summary: 'A shelter',
      tags: ['Pets'],
      parameters: [{ name: 'shelterId', in: 'path', required: true, schema: { type: 'integer', minimum: 1, maximum: 1000 } }],
      responses: {
        '200': { description: 'The shelter.', headers: { ETag: { schema: { type: 'string' } } }, content: { 'application/json': shelter, 'application/xml': shelter } },
        '304': { description: 'Not modified.' },
        '4XX': problems,
        default: problems,
      },
    },
  };
  document.paths['/examples/shelters'] = {
    post: {
      operationId: 'create-shelter-example',
      summary: 'Add a shelter',
      tags: ['Pets'],
      requestBody: { required: true, content: { 'application/json': shelter, 'application/xml': shelter } },
      responses: { '201': { description: 'The shelter.', content: { 'application/json': shelter, 'application/xml': shelter } }, '4XX': problems, default: problems },
    },
  };
  return document as unknown as OpenApiDocument;
}

const SHELTER_7 = { id: 7, name: 'North & <South>', open: true, kinds: ['cat', 'dog'], phones: ['+44 1', '+44 2'] };
const SHELTER_7_XML =
  '<?xml version="1.0" encoding="UTF-8"?><as:shelter xmlns:as="https://animal-store.example/xml" id="7"><name>North &amp; &lt;South&gt;</name><open>true</open><kinds><kind>cat</kind><kind>dog</kind></kinds><phone>+44 1</phone><phone>+44 2</phone></as:shelter>';

let t: Injectable;
const created: unknown[] = [];
beforeAll(async () => {
  const getShelterExample = async ({ path }: { path: { shelterId: number } }) =>
    path.shelterId === 7 ? { status: 200, body: SHELTER_7 } : { status: 404, body: { code: 'not_found', message: `No shelter has id ${path.shelterId}.`, status: 404 } };
  const createShelterExample = async ({ body }: { body: unknown }) => {
    created.push(body);
    return { status: 201, body };
  };
  t = await injectable({ document: withRepresentations(), handlers: { ...handlers, 'get-shelter-example': getShelterExample, 'create-shelter-example': createShelterExample } as unknown as Handlers });
});
afterAll(() => t.close());

const get = (accept?: string, headers: Record<string, string> = {}) => t.inject({ method: 'GET', url: '/v1/examples/shelters/7', headers: accept === undefined ? headers : { ...headers, accept } });
const post = (contentType: string, payload: string, accept?: string) =>
  t.inject({ method: 'POST', url: '/v1/examples/shelters', payload, headers: { 'content-type': contentType, ...(accept === undefined ? {} : { accept }) } });

describe('answers by Accept', () => {
  it('without Accept, the first declared (JSON); Accept: application/xml, the XML the schema describes (attribute, namespace, wrapped and bare arrays, escaping); both with Vary: Accept', async () => {
    const json = await get();
    expect(json.statusCode).toBe(200);
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(json.headers.vary).toBe('Accept');
    expect(json.json()).toEqual(SHELTER_7);
    const xml = await get('application/xml');
    expect(xml.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(xml.headers.vary).toBe('Accept');
    expect(xml.body).toBe(SHELTER_7_XML);
  });

  it('weighs q-values and wildcards as RFC 9110 says', async () => {
    const typeOf = async (accept: string) => (await get(accept)).headers['content-type'];
    expect(await typeOf('application/json;q=0.5, application/xml')).toBe('application/xml; charset=utf-8');
    expect(await typeOf('application/xml;q=0.2, application/*;q=0.9')).toBe('application/json; charset=utf-8');
    expect(await typeOf('text/html, application/xhtml+xml, application/xml;q=0.9, */*;q=0.8')).toBe('application/xml; charset=utf-8');
    expect(await typeOf('*/*')).toBe('application/json; charset=utf-8');
  });

  it('one ETag per representation: a tag answers 304 only for the representation it was taken from', async () => {
    const json = await get('application/json');
    const xml = await get('application/xml');
    expect(json.headers.etag).toBeDefined();
    expect(xml.headers.etag).not.toBe(json.headers.etag);
    const notModified = await get('application/xml', { 'if-none-match': xml.headers.etag as string });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.headers.vary).toBe('Accept');
    const otherRepresentation = await get('application/json', { 'if-none-match': xml.headers.etag as string });
    expect(otherRepresentation.statusCode).toBe(200);
  });

  it('an Accept that allows none is a 406 in the declared error shape, before the handler runs', async () => {
    const refused = await get('text/html');
    expect(refused.statusCode).toBe(406);
    expect(refused.headers['content-type']).toBe('application/problem+json');
    expect(refused.json()).toMatchObject({ status: 406, code: 'not_acceptable', detail: "This operation answers application/json or application/xml; the request's Accept allows none of them." });
    const before = created.length;
    expect((await post('application/json', JSON.stringify({ id: 3, name: 'East' }), 'image/png')).statusCode).toBe(406);
    expect(created.length).toBe(before);
  });

  it('errors follow Accept among the error representations: Problem Details in XML, in RFC 9457 namespace', async () => {
    const reply = await t.inject({ method: 'GET', url: '/v1/examples/shelters/8', headers: { accept: 'application/problem+xml, application/xml' } });
    expect(reply.statusCode).toBe(404);
    expect(reply.headers['content-type']).toBe('application/problem+xml; charset=utf-8');
    expect(reply.body).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><problem xmlns="urn:ietf:rfc:7807"><type>https://animal-store.example/problems/not_found</type><title>Not Found</title><status>404</status><detail>No shelter has id 8.</detail><instance>/v1/examples/shelters/8</instance><code>not_found</code></problem>',
    );
    expect((await t.inject({ method: 'GET', url: '/v1/examples/shelters/8' })).headers['content-type']).toBe('application/problem+json');
  });

  it('the pets answer as before: JSON for any Accept that allows it, no Vary; an Accept that does not is a 406 Error', async () => {
    const created = await t.inject({ method: 'POST', url: '/v1/pets', payload: { name: 'Rex', categoryId: 1 } });
    const id = (created.json() as { id: number }).id;
    for (const accept of [undefined, '*/*', 'application/json', 'text/html, */*;q=0.1']) {
      const pet = await t.inject({ method: 'GET', url: `/v1/pets/${id}`, headers: accept === undefined ? {} : { accept } });
      expect(pet.statusCode).toBe(200);
      expect(pet.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(pet.headers.vary).toBeUndefined();
    }
    const refused = await t.inject({ method: 'GET', url: `/v1/pets/${id}`, headers: { accept: 'application/xml' } });
    expect(refused.statusCode).toBe(406);
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(refused.json()).toEqual({ code: 'not_acceptable', status: 406, message: "This operation answers application/json; the request's Accept allows none of them." });
  });
});

describe('an XML request body', () => {
  it('is read into the fields of its schema (attribute, wrapped and bare arrays, entities) and coerced by it, as a form is', async () => {
    const body = `<?xml version="1.0"?><as:shelter xmlns:as="https://animal-store.example/xml" id="3"><name>West &amp; &#x45;ast</name><open>false</open><kinds><kind>rabbit</kind></kinds><phone>1</phone></as:shelter>`;
    const reply = await post('application/xml', body, 'application/json');
    expect(reply.statusCode).toBe(201);
    expect(reply.json()).toEqual({ id: 3, name: 'West & East', open: false, kinds: ['rabbit'], phones: ['1'] });
    const back = await post('application/xml; charset=utf-8', body, 'application/xml');
    expect(back.body).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><as:shelter xmlns:as="https://animal-store.example/xml" id="3"><name>West &amp; East</name><open>false</open><kinds><kind>rabbit</kind></kinds><phone>1</phone></as:shelter>',
    );
  });

  it('that breaks the schema is a 400 naming each field, as JSON would be', async () => {
    const reply = await post('application/xml', '<shelter id="0"><colour>red</colour></shelter>');
    expect(reply.statusCode).toBe(400);
    expect(reply.json()).toMatchObject({ code: 'validation_failed', details: expect.arrayContaining([{ in: 'body', field: 'id', message: expect.any(String) }, { in: 'body', field: 'name', message: 'is required' }, { in: 'body', field: 'colour', message: 'is not a field of this request body' }]) });
  });

  it('is refused with a 400 naming the body, before anything is expanded: a DOCTYPE (XXE, billion laughs), an undefined entity, a malformed document, two roots, bytes that are not UTF-8', async () => {
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]><shelter id="1"><name>&lol2;</name></shelter>`;
    const xxe = `<?xml version="1.0"?><!DOCTYPE shelter [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><shelter id="1"><name>&xxe;</name></shelter>`;
    const cases: Array<[string, string | Buffer, RegExp]> = [
      ['billion laughs', laughs, /DOCTYPE/],
      ['XXE', xxe, /DOCTYPE/],
      ['undefined entity', '<shelter id="1"><name>&nbsp;</name></shelter>', /entity/],
      ['malformed', '<shelter id="1"><name>x</shelter>', /not well-formed/],
      ['two roots', '<shelter id="1"/><shelter id="2"/>', /one root/],
      ['not UTF-8', Buffer.from([0x3c, 0x61, 0x3e, 0xff, 0x3c, 0x2f, 0x61, 0x3e]), /UTF-8/],
    ];
    const before = created.length;
    for (const [name, payload, message] of cases) {
      const reply = await t.inject({ method: 'POST', url: '/v1/examples/shelters', payload, headers: { 'content-type': 'application/xml' } });
      expect(reply.statusCode, name).toBe(400);
      expect(reply.headers['content-type'], name).toBe('application/problem+json');
      expect(reply.json(), name).toMatchObject({ code: 'validation_failed', details: [{ in: 'body', field: '', message: expect.stringMatching(message) }] });
    }
    expect(created.length).toBe(before);
    expect(t.app.violations).toEqual([]);
  });
});
