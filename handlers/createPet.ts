import { FORMAT_NAMES, hasSignatureOf, isPhotoMediaType, refusalResult, type Handler, type HandlerDeps, type Received, type Schemas } from '../src/domain/contract.js';

type Pet = Schemas['Pet'];

/** Tells the store's subscribers of the animal, in the transaction that stores it (pets.create's `then`). */
const announce = ({ webhooks }: HandlerDeps) => (pet: Pet) => webhooks.emit('petCreated', { type: 'pet.created', timestamp: new Date().toISOString(), data: pet });

/** The 201 for a stored animal: it, and its address. */
const created = (pet: Pet, basePath: string) => ({ status: 201 as const, body: pet, headers: { Location: `${basePath}/pets/${pet.id}` } });

/**
 * createPet: POST /pets. Stores the animal and answers with it and its address. A form
 * (`multipart/form-data`) may carry a photo: the animal and its photo are stored together or not
 * at all. Either way `petCreated` is emitted with the animal, committed with it. With an
 * `Idempotency-Key` the server makes it exactly-once (src/features/exactlyOnce/): nothing here.
 */
export const createPet: Handler<'createPet'> = async (request, deps) => {
  if (request.mediaType === 'multipart/form-data') return fromForm(request.body, deps);
  const { body } = request;
  // Validation applied the spec's default; its absence here would be a wiring bug, not bad input.
  if (body.status === undefined) throw new Error('createPet: the spec default for status was not applied');
  return created(await deps.pets.create({ name: body.name, categoryId: body.categoryId, status: body.status }, announce(deps)), deps.basePath);
};

/** A form's animal, with its photo when it has one, in one unit of work. */
async function fromForm({ name, categoryId, status, photo }: Received<Schemas['NewPetWithPhoto']>, deps: HandlerDeps) {
  const { pets, photos, basePath, unitOfWork } = deps;
  if (status === undefined) throw new Error('createPet: the spec default for status was not applied');
  const record = { name, categoryId, status };
  if (photo === undefined) return created(await pets.create(record, announce(deps)), basePath);
  // The part's media type was checked against the spec's encoding (415): another is a wiring bug.
  if (!isPhotoMediaType(photo.mediaType)) throw new Error(`createPet: the photo part's encoding let ${photo.mediaType} in`);
  if (!hasSignatureOf(photo.bytes, photo.mediaType)) return refusalResult('validation_failed', 'notThatImage', 'photo', FORMAT_NAMES[photo.mediaType]);
  const pet = await unitOfWork(async () => {
    const stored = await pets.create(record, announce(deps));
    await photos.put(stored.id, { bytes: photo.bytes, mediaType: photo.mediaType });
    return stored;
  });
  return created(pet, basePath);
}
