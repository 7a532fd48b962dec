import { errorResult, type Handler } from '../src/domain/contract.js';

/** getPet: GET /pets/{petId}. Deprecated; the server adds Deprecation and Sunset from the spec. */
export const getPet: Handler<'getPet'> = async ({ path }, { pets }) => {
  const pet = await pets.get(path.petId);
  if (!pet) return errorResult('not_found', `No animal has id ${path.petId}.`);
  return { status: 200, body: pet };
};
