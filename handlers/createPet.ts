import { errorResult, FORMAT_NAMES, hasSignatureOf, isPhotoMediaType, type Handler } from '../src/contract.js';

/**
 * createPet: POST /pets. Stores the animal and answers with it and its address. A form
 * (`multipart/form-data`) may carry a photo: the animal and its photo are stored together or not
 * at all. With an `Idempotency-Key` the server makes it exactly-once (src/features/exactlyOnce/):
 * nothing here.
 */
export const createPet: Handler<'createPet'> = async (request, { pets, photos, basePath, unitOfWork }) => {
  const { body } = request;
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
      await photos.put(created.id, { bytes: photo.bytes, mediaType: photo.mediaType });
      return created;
    });
    return { status: 201, body: pet, headers: { Location: `${basePath}/pets/${pet.id}` } };
  }
  const pet = await pets.create(record);
  return { status: 201, body: pet, headers: { Location: `${basePath}/pets/${pet.id}` } };
};
