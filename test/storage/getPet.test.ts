import { beforeAll, expect, it } from 'vitest';
import type { Pet } from '../../client/index.js';
import { addPets, describeEachTarget } from '../support/server.js';

// §9.3: deprecated, removal on 5 December 2030; the server derives these from the spec.
const SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT';
const DEPRECATION = /^@\d+$/;

describeEachTarget('getPet: GET /pets/{petId} (deprecated)', (t) => {
  let pet: Pet;
  beforeAll(async () => {
    [pet] = (await addPets(t(), 1)) as [Pet];
  });

  it('§4.3 200: the animal, with Deprecation and Sunset headers', async () => {
    const { data, response } = await t().client.GET('/pets/{petId}', { params: { path: { petId: pet.id } } });
    expect(response.status).toBe(200);
    expect(data).toEqual(pet);
    expect(response.headers.get('sunset')).toBe(SUNSET);
    expect(response.headers.get('deprecation')).toMatch(DEPRECATION);
  });

  it('§4.3 404: an unknown id is a not_found Error, still with the deprecation headers', async () => {
    const response = await t().request('/pets/987654');
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ code: 'not_found', message: expect.stringContaining('987654'), status: 404 });
    expect(response.headers.get('sunset')).toBe(SUNSET);
    expect(response.headers.get('deprecation')).toMatch(DEPRECATION);
  });

  it.each(['abc', '0', '-3', '1.5', '9007199254740992', '99999999999999999999', '%00'])('400: petId=%s is not an id', async (petId) => {
    const response = await t().request(`/pets/${petId}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'validation_failed', status: 400, details: [{ in: 'path', field: 'petId' }] });
  });

  it('400: a path that is not valid percent-encoding is a validation_failed Error, never a 500', async () => {
    const response = await t().request('/pets/%E0%A4%A');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'validation_failed', status: 400, details: [{ in: 'path', field: '', message: 'is not valid percent-encoding' }] });
  });

  it('decision: the largest id a client can hold, 2^53-1, is a valid id (404 here, not 400)', async () => {
    const response = await t().request('/pets/9007199254740991');
    expect(response.status).toBe(404);
  });

  it('§4.3 401: an unauthenticated client cannot tell an existing pet from a missing one', async () => {
    const existing = await t().request(`/pets/${pet.id}`, { auth: false });
    const missing = await t().request('/pets/987654', { auth: false });
    expect(existing.status).toBe(401);
    expect(missing.status).toBe(401);
    expect(await existing.json()).toEqual(await missing.json());
    expect(existing.headers.get('www-authenticate')).toMatch(/^Bearer /);
  });
});
