import { errorResult, type Handler } from '../src/contract.js';

/**
 * createPet: POST /pets. Stores the animal and answers with it and its address. With an
 * `Idempotency-Key`, at most once per key and caller: a retry gets the first 201 again.
 */
export const createPet: Handler<'createPet'> = async ({ body, header, caller }, { pets, basePath }) => {
  // Validation applied the spec's default; its absence here would be a wiring bug, not bad input.
  if (body.status === undefined) throw new Error('createPet: the spec default for status was not applied');
  const key = header['Idempotency-Key'];
  // Keys are kept per caller, and createPet's key check always names one: its absence is a wiring bug too.
  if (key !== undefined && caller === undefined) throw new Error('createPet: an Idempotency-Key arrived without a caller');
  const once = key !== undefined && caller !== undefined ? { caller, key } : undefined;
  const created = await pets.create({ name: body.name, categoryId: body.categoryId, status: body.status }, once);
  switch (created.outcome) {
    case 'created':
      return { status: 201, body: created.pet, headers: { Location: `${basePath}/pets/${created.pet.id}` } };
    case 'replayed':
      return { status: 201, body: created.body, headers: { Location: `${basePath}/pets/${created.petId}`, 'Idempotent-Replayed': 'true' } };
    case 'idempotency_key_reused':
      return errorResult('idempotency_key_reused', 'This Idempotency-Key was already used with a different body; use a new key for a different animal.');
    case 'idempotency_key_in_use':
      return errorResult('idempotency_key_in_use', 'A request with this Idempotency-Key is still being served; retry in 1 second.');
  }
};
