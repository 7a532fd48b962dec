import { expect, it } from 'vitest';
import { addPets, countPets, describeEachTarget } from '../support/server.js';

const MAX_SAFE = 9007199254740991;

describeEachTarget('createPet: POST /pets', (t) => {
  const post = (body: string, headers: Record<string, string> = { 'Content-Type': 'application/json' }) => t().request('/pets', { method: 'POST', body, headers });

  it('§4.2 201: answers with the stored Pet, its assigned id, and a Location header', async () => {
    const { data, response } = await t().client.POST('/pets', { body: { name: 'Biscuit', categoryId: 2, status: 'pending' } });
    expect(response.status).toBe(201);
    expect(data).toEqual({ id: expect.any(Number), name: 'Biscuit', categoryId: 2, status: 'pending' });
    expect(response.headers.get('location')).toBe(`/v1/pets/${data?.id}`);
    const fetched = await t().client.GET('/pets/{petId}', { params: { path: { petId: data?.id ?? 0 } } });
    expect(fetched.data).toEqual(data);
  });

  it('decision: status defaults to available when omitted', async () => {
    const { data } = await t().client.POST('/pets', { body: { name: 'Miso', categoryId: 1 } });
    expect(data?.status).toBe('available');
  });

  it('ids come from the database, ascend, and are never reused', async () => {
    const pets = await addPets(t(), 5);
    const ids = pets.map((p) => p.id);
    expect(new Set(ids).size).toBe(5);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
  });

  it('any Unicode name of 1 to 255 characters round-trips exactly', async () => {
    for (const name of ['Zoë 🐕‍🦺', 'ひまわり', 'x', 'a'.repeat(255), '  padded  ', 'مرحبا', '"quoted" \\ back']) {
      const { data, response } = await t().client.POST('/pets', { body: { name, categoryId: 1 } });
      expect(response.status).toBe(201);
      expect(data?.name).toBe(name);
      const again = await t().client.GET('/pets/{petId}', { params: { path: { petId: data?.id ?? 0 } } });
      expect(again.data?.name).toBe(name);
    }
  });

  it('decision: categoryId up to 2^53-1 is accepted and returned exactly', async () => {
    const response = await post(`{"name":"Big","categoryId":${MAX_SAFE}}`);
    expect(response.status).toBe(201);
    expect(await response.text()).toContain(`"categoryId":${MAX_SAFE}`);
  });

  const invalid: Array<[string, string, string]> = [
    ['categoryId as a string is not coerced', '{"name":"Rex","categoryId":"3"}', 'categoryId'],
    ['categoryId beyond 2^53-1 is refused, not rounded', '{"name":"Rex","categoryId":9007199254740993}', 'categoryId'],
    ['categoryId of exactly 2^53', '{"name":"Rex","categoryId":9007199254740992}', 'categoryId'],
    ['categoryId with a fraction', '{"name":"Rex","categoryId":1.5}', 'categoryId'],
    ['categoryId below 1', '{"name":"Rex","categoryId":0}', 'categoryId'],
    ['name missing', '{"categoryId":3}', 'name'],
    ['categoryId missing', '{"name":"Rex"}', 'categoryId'],
    ['empty name', '{"name":"","categoryId":3}', 'name'],
    ['name over 255 characters', JSON.stringify({ name: 'a'.repeat(256), categoryId: 3 }), 'name'],
    ['name with a NUL character', '{"name":"a\\u0000b","categoryId":3}', 'name'],
    ['name with a lone surrogate', '{"name":"a\\ud800b","categoryId":3}', 'name'],
    ['name of the wrong type', '{"name":42,"categoryId":3}', 'name'],
    ['status outside the enumeration', '{"name":"Rex","categoryId":3,"status":"lost"}', 'status'],
    ['a field the contract does not have', '{"name":"Rex","categoryId":3,"id":7}', 'id'],
    ['a __proto__ key', '{"name":"Rex","categoryId":3,"__proto__":{"admin":true}}', '__proto__'],
    ['an array instead of an object', '[{"name":"Rex","categoryId":3}]', ''],
    ['null instead of an object', 'null', ''],
  ];
  it.each(invalid)('§4.2 400 validation_failed: %s', async (_rule, body, field) => {
    const before = await countPets(t());
    const response = await post(body);
    expect(response.status).toBe(400);
    const error = (await response.json()) as { code: string; status: number; details?: Array<{ in: string; field: string }> };
    expect(error).toMatchObject({ code: 'validation_failed', status: 400 });
    expect(error.details?.some((d) => d.in === 'body' && d.field === field)).toBe(true);
    expect(await countPets(t())).toBe(before);
  });

  it('§4.2 400: a missing body is named as such', async () => {
    const response = await t().request('/pets', { method: 'POST' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'validation_failed', status: 400, details: [{ in: 'body', field: '' }] });
  });

  it('400 invalid_json: malformed JSON', async () => {
    for (const body of ['{"name":', '{name: "x"}', '', '{"a":1}}']) {
      const response = await post(body);
      expect(response.status).toBe(400);
      const error = (await response.json()) as { code: string };
      expect(['invalid_json', 'validation_failed']).toContain(error.code);
      if (body !== '') expect(error.code).toBe('invalid_json');
    }
  });

  it('415 unsupported_media_type: a body that is not application/json', async () => {
    const response = await post('name=Rex&categoryId=3', { 'Content-Type': 'application/x-www-form-urlencoded' });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ code: 'unsupported_media_type', status: 415 });
  });

  it('413 payload_too_large: a body over 64 KiB', async () => {
    const before = await countPets(t());
    const response = await post(JSON.stringify({ name: 'x'.repeat(70_000), categoryId: 1 }));
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'payload_too_large', status: 413 });
    expect(await countPets(t())).toBe(before);
  });

  it('§4.2 401: no key, no animal added', async () => {
    const before = await countPets(t());
    const response = await t().request('/pets', { method: 'POST', auth: false, body: '{"name":"Rex","categoryId":3}', headers: { 'Content-Type': 'application/json' } });
    expect(response.status).toBe(401);
    expect(await countPets(t())).toBe(before);
  });
});
