import { BinaryBody, errorResult, isPhotoMediaType, type Handler } from '../src/domain/contract.js';

/**
 * getPetPhoto: GET /pets/{petId}/photo. The photo's bytes with the media type they were stored
 * with; the server tags them (ETag, 304) and answers Range requests (206, 416) from the spec.
 */
export const getPetPhoto: Handler<'getPetPhoto'> = async ({ path }, { photos }) => {
  const found = await photos.get(path.petId);
  if (found.found === 'no_pet') return errorResult('not_found', `No animal has id ${path.petId}.`);
  if (found.found === 'no_photo') return errorResult('not_found', `The animal with id ${path.petId} has no photo.`);
  const { bytes, mediaType, sha256 } = found.photo;
  // Only putPetPhoto and createPet store photos, each of a type the spec declares.
  if (!isPhotoMediaType(mediaType)) throw new Error(`getPetPhoto: a photo of animal ${path.petId} is stored as ${mediaType}`);
  return { status: 200, body: new BinaryBody(bytes, mediaType, sha256) };
};
