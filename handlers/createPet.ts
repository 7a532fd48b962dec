import type { Handler } from '../src/contract.js';

/**
 * createPet: POST /pets. Stores the animal and answers with it and its address. With an
 * `Idempotency-Key` the server makes it exactly-once (src/features/exactlyOnce/): nothing here.
 */
export const createPet: Handler<'createPet'> = async ({ body }, { pets, basePath }) => {
  // Validation applied the spec's default; its absence here would be a wiring bug, not bad input.
  if (body.status === undefined) throw new Error('createPet: the spec default for status was not applied');
  const pet = await pets.create({ name: body.name, categoryId: body.categoryId, status: body.status });
  return { status: 201, body: pet, headers: { Location: `${basePath}/pets/${pet.id}` } };
};
