/**
 * No field is silently lost: a pet with every field the spec accepts in createPet's body comes
 * back, every field, in the 201, from getPet and in its listPets entry (test/support/roundTrip.ts
 * derives the fields, defaults and expectations from generated/openapi.json at test time, so a
 * field added to the spec later is covered without touching this file).
 *
 * The check is proven to bite: against small stand-in servers, one that stores only the fields it
 * knew of fails naming the new field, one that ignores a field and applies its default fails
 * naming it, and one that stores everything passes; against the real server, a field the spec
 * gains but the server does not know fails, named.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { checkRoundTrip, expectedPet, loadDocument, missingFields, petContract, petDifferences, samplePet, schemaErrors, type Json, type PetRecord } from '../support/roundTrip.js';
import { describeEachTarget } from '../support/server.js';

/** A copy of the bundled contract whose NewPet and Pet gained an optional string field `name`. */
function withNewField(name: string): Json {
  const document = loadDocument();
  const schemas = document.components.schemas as Json;
  if (name in schemas.NewPet.properties || name in schemas.Pet.properties) throw new Error(`the spec already has ${name}`);
  schemas.NewPet.properties[name] = { type: 'string', maxLength: 50, examples: ['Bis'] };
  schemas.Pet.properties[name] = { type: 'string', maxLength: 50 };
  return document;
}

/** A field name no spec has: what a test adds cannot collide with a field the spec gains. */
const newFieldName = () => `probe${Math.random().toString(36).slice(2, 10)}`;

describe('roundTrip.ts: expectations derived from the spec', () => {
  it('samplePet fills every property of the request schema, required and optional, validly', () => {
    const contract = petContract();
    const pet = samplePet();
    expect(Object.keys(pet).sort()).toEqual(Object.keys(contract.request.properties).sort());
    expect(schemaErrors(contract.createPet.request, pet)).toEqual([]);
  });

  it('samplePet gives each optional field with a default another value, so an ignored field shows', () => {
    const { defaults } = petContract().request;
    expect(Object.keys(defaults).length).toBeGreaterThan(0);
    const pet = samplePet();
    for (const [field, value] of Object.entries(defaults)) expect(pet[field], field).not.toEqual(value);
  });

  it("expectedPet: the sent body, the spec's default for an absent optional field (status: available), and the id", () => {
    const pet = samplePet();
    expect(expectedPet(7, pet)).toEqual({ ...pet, id: 7 });
    expect(expectedPet(8, { name: 'Miso', categoryId: 1 })).toEqual({ id: 8, name: 'Miso', categoryId: 1, status: 'available' });
    expect(schemaErrors(petContract().createPet.response, expectedPet(8, { name: 'Miso', categoryId: 1 }))).toEqual([]);
  });

  it('a field added to the spec is sampled and expected back without changing any test', () => {
    const field = newFieldName();
    const document = withNewField(field);
    const pet = samplePet(document);
    expect(pet[field]).toBe('Bis');
    expect(expectedPet(3, pet, document)[field]).toBe('Bis');
    // A store that knows every field but the new one.
    const { [field]: _lost, ...stored } = expectedPet(3, pet, document);
    expect(missingFields(expectedPet(3, pet, document), stored)).toEqual([field]);
  });

  it('the comparison names every field missing, different or unexpected', () => {
    expect(petDifferences({ id: 1, a: 1, b: [1] }, { id: 1, b: [2], c: 3 })).toEqual([
      { field: 'a', problem: 'missing', expected: 1 },
      { field: 'b', problem: 'different', expected: [1], got: [2] },
      { field: 'c', problem: 'unexpected', got: 3 },
    ]);
    expect(petDifferences({ id: 1, o: { x: 1, y: 2 } }, { o: { y: 2, x: 1 }, id: 1 })).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Stand-in servers: POST /v1/pets, GET /v1/pets/{id}, GET /v1/pets (one page), storing `keep(body)`.
// ---------------------------------------------------------------------------------------------

async function standIn(keep: (body: PetRecord) => PetRecord): Promise<{ api: string; server: Server }> {
  const pets: PetRecord[] = [];
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    let text = '';
    for await (const chunk of req) text += String(chunk);
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'POST' && url.pathname === '/v1/pets') {
      const pet = { id: pets.length + 1, ...keep(JSON.parse(text) as PetRecord) };
      pets.push(pet);
      return send(201, pet);
    }
    const one = /^\/v1\/pets\/(\d+)$/.exec(url.pathname);
    if (req.method === 'GET' && one) return send(200, pets[Number(one[1]) - 1]);
    if (req.method === 'GET' && url.pathname === '/v1/pets') return send(200, pets);
    return send(404, { code: 'not_found', message: 'no', status: 404 });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { api: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

describe('checkRoundTrip bites (stand-in servers)', () => {
  const field = newFieldName();
  const document = withNewField(field);
  const servers: Server[] = [];
  afterAll(() => {
    for (const s of servers) s.close();
  });
  const start = async (keep: (body: PetRecord) => PetRecord) => {
    const { api, server } = await standIn(keep);
    servers.push(server);
    return api;
  };

  it('a server that stores only the fields it knew of fails, naming the new field in the 201, getPet and listPets', async () => {
    const api = await start(({ [field]: _lost, ...known }) => ({ status: 'available', ...known }));
    const problems = await checkRoundTrip(api, 'key', document);
    expect(problems.filter((p) => p.includes(`"${field}" is missing`))).toHaveLength(3);
    expect(problems.every((p) => p.includes(`"${field}"`)), problems.join('\n')).toBe(true);
  });

  it('a server that ignores status and applies its default fails, naming status', async () => {
    const api = await start((b) => ({ ...b, status: 'available' }));
    const problems = await checkRoundTrip(api, 'key', document);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((p) => p.includes('"status"')), problems.join('\n')).toBe(true);
  });

  it('a server that stores every field passes', async () => {
    const api = await start((b) => ({ name: b.name, categoryId: b.categoryId, status: 'available', ...b }));
    expect(await checkRoundTrip(api, 'key', document)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// The real server, on each storage target.
// ---------------------------------------------------------------------------------------------

describeEachTarget('round trip: every field the spec accepts comes back', (t) => {
  it('a pet with every field of NewPet: the 201, GET /pets/{id} and its GET /pets entry each equal expectedPet, every field', async () => {
    const problems = await checkRoundTrip(t().api, t().key);
    expect(problems, `fields lost or changed:\n${problems.join('\n')}`).toEqual([]);
  });

  it('a field the spec gains but the server does not know fails the round trip, named', async () => {
    const field = newFieldName();
    const problems = await checkRoundTrip(t().api, t().key, withNewField(field));
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.some((p) => p.includes(`"${field}"`)), problems.join('\n')).toBe(true);
  });
});
