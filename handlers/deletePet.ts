import { errorResult, ifMatchMatches, jsonEntityTag, refusalResult, type Handler } from '../src/domain/contract.js';

/** How often the removal is tried again, on the animal read anew, when another writer changed it in between. */
const ATTEMPTS = 5;

/**
 * deletePet: DELETE /pets/{petId}. Removes the animal and its photo in one unit of work: both or
 * neither. With If-Match, only while the animal is still in a state the header names (412
 * otherwise). The removal is a compare and set on what was read, so a change made in between
 * is seen: the animal is read again, and with If-Match judged anew (a 412 once its tag moved on).
 * `petDeleted` (its id) commits with the removal.
 */
export const deletePet: Handler<'deletePet'> = async ({ path, header }, { pets, photos, webhooks, unitOfWork }) => {
  const ifMatch = header['If-Match'];
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const current = await pets.get(path.petId);
    if (!current) return errorResult('not_found', `No animal has id ${path.petId}.`);
    if (ifMatch !== undefined && !ifMatchMatches(ifMatch, jsonEntityTag(current))) return refusalResult('precondition_failed', 'changedSince', `Animal ${path.petId}`);
    const removed = await unitOfWork(async () => {
      await photos.remove(current.id);
      // Changed since it was read: throwing rolls the photo's removal back with the unit.
      if (!(await pets.remove(current))) throw new ChangedSince();
      await webhooks.emit('petDeleted', { type: 'pet.deleted', timestamp: new Date().toISOString(), data: { id: current.id } });
    }).then(
      () => true,
      (error: unknown) => (error instanceof ChangedSince ? false : Promise.reject(error)),
    );
    if (removed) return { status: 204, body: undefined };
    // Changed, gone or given a photo since it was read: read again (If-Match is judged on the new state).
  }
  throw new Error(`deletePet: animal ${path.petId} kept changing under ${ATTEMPTS} attempts`);
};

/** Thrown inside the unit of work to roll it back when the animal changed since it was read. */
class ChangedSince extends Error {}
