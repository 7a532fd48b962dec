import { errorResult, FORMAT_NAMES, hasSignatureOf, isPhotoMediaType, type Handler } from '../src/contract.js';

/**
 * createPet: POST /pets. Stores the animal and answers with it and its address. With an
 * `Idempotency-Key`, at most once per key and caller: a retry gets the first 201 again. A form
 * (`multipart/form-data`) may carry a photo: the animal and its photo are stored together or not
 * at all.
 */
export const createPet: Handler<'createPet'> = async (request, { pets, photos, basePath, unitOfWork }) => {
  const { body, header, caller } = request;
  // Validation applied the spec's default; its absence here would be a wiring bug, not bad input.
  if (body.status === undefined) throw new Error('createPet: the spec default for status was not applied');
  const record = { name: body.name, categoryId: body.categoryId, status: body.status };
  if (request.mediaType === 'multipart/form-data' && request.body.photo !== undefined) {
    const photo = request.body.photo;
    // The part's media type was checked against the spec's encoding (415): another is a wiring bug.
    if (!isPhotoMediaType(photo.mediaType)) throw new Error(`createPet: the photo part's encoding let ${photo.mediaType} in`);
    const format = FORMAT_NAMES[photo.mediaType];
    if (!hasSignatureOf(photo.bytes, photo.mediaType)) {
      const message = `is not a ${format} image: its first bytes are not the ${format} signature`;
      return errorResult('validation_failed', `The request is invalid: body field "photo" ${message}.`, [{ in: 'body', field: 'photo', message }]);
    }
    const pet = await unitOfWork(async () => {
      const created = await pets.create(record);
      if (created.outcome !== 'created') throw new Error(`createPet: a create without a key came to ${created.outcome}`);
      await photos.put(created.pet.id, { bytes: photo.bytes, mediaType: photo.mediaType });
      return created.pet;
    });
    return { status: 201, body: pet, headers: { Location: `${basePath}/pets/${pet.id}` } };
  }
  const key = header['Idempotency-Key'];
  // Keys are kept per caller, and createPet's key check always names one: its absence is a wiring bug too.
  if (key !== undefined && caller === undefined) throw new Error('createPet: an Idempotency-Key arrived without a caller');
  const once = key !== undefined && caller !== undefined ? { caller, key } : undefined;
  const created = await pets.create(record, once);
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
