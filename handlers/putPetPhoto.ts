import { errorResult, FORMAT_NAMES, hasSignatureOf, isPhotoMediaType, refusalResult, type Handler } from '../src/domain/contract.js';

/**
 * putPetPhoto: PUT /pets/{petId}/photo. Stores the image sent as the body, replacing the
 * animal's photo, when its first bytes are the signature of its media type. The media type and
 * the 5 MiB limit were checked from the spec before the body was read (415, 413).
 */
export const putPetPhoto: Handler<'putPetPhoto'> = async ({ path, body }, { photos }) => {
  // The body reader only lets in a media type the spec declares: another one is a wiring bug.
  if (!isPhotoMediaType(body.mediaType)) throw new Error(`putPetPhoto: the spec's media types let ${body.mediaType} in`);
  if (!hasSignatureOf(body.bytes, body.mediaType)) return refusalResult('invalid_image', 'notThatImage', FORMAT_NAMES[body.mediaType]);
  const stored = await photos.put(path.petId, { bytes: body.bytes, mediaType: body.mediaType });
  if (stored === 'no_pet') return errorResult('not_found', `No animal has id ${path.petId}.`);
  return { status: 204, body: undefined };
};
