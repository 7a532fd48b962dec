import { applyMergePatch, errorResult, ifMatchMatches, jsonEntityTag, refusalResult, type Handler, type Schemas } from '../src/domain/contract.js';

type Pet = Schemas['Pet'];
type PetField = Schemas['PetField'];

/** The fields a change can set, in the order of Pet. */
const FIELDS: readonly PetField[] = ['name', 'categoryId', 'status'];

/** How often the change is tried again, on the animal read anew, when another writer changed it in between. */
const ATTEMPTS = 5;

/**
 * updatePet: PATCH /pets/{petId}. Applies the merge patch to the animal as it stands and answers
 * it as it now is (the server tags the answer). With If-Match, only while the animal is still in
 * a state the header names (412 otherwise). The write is a compare and set on what was read, so
 * a change made in between is never overwritten: the animal is read again, and with If-Match
 * judged anew (a 412 once its tag moved on), without it patched anew. `petUpdated` (the animal
 * and the fields whose values moved) commits with the change.
 */
export const updatePet: Handler<'updatePet'> = async ({ path, header, body }, { pets, webhooks, unitOfWork }) => {
  const ifMatch = header['If-Match'];
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const current = await pets.get(path.petId);
    if (!current) return errorResult('not_found', `No animal has id ${path.petId}.`);
    if (ifMatch !== undefined && !ifMatchMatches(ifMatch, jsonEntityTag(current))) return refusalResult('precondition_failed', 'changedSince', `Animal ${path.petId}`);
    const { name, categoryId, status } = applyMergePatch(current, body) as Pet;
    const updated = await unitOfWork(async () => {
      const after = await pets.update(current, { name, categoryId, status });
      if (after) await webhooks.emit('petUpdated', { type: 'pet.updated', timestamp: new Date().toISOString(), data: { pet: after, changed: FIELDS.filter((field) => after[field] !== current[field]) } });
      return after;
    });
    if (updated) return { status: 200, body: updated };
    // Changed or removed since it was read: read again (If-Match is judged on the new state).
  }
  throw new Error(`updatePet: animal ${path.petId} kept changing under ${ATTEMPTS} attempts`);
};
