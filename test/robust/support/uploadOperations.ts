/**
 * The upload operations the robust upload proofs run against today, added to the bundled contract
 * the way test/quick/uploads.test.ts adds its one: shaped as contract 1.3.0's (a photo as raw bytes,
 * image/png, jpeg or webp up to 5,242,880 bytes; and a pet as multipart/form-data, NewPet's fields
 * plus an optional `photo` file part), under /examples/ so they never meet the real ones. No
 * handler serves them, so a body that is read and valid reaches the operation's 501 stub: what
 * these proofs look at is everything before that.
 */
import type { OpenApiDocument } from '../../../src/shared/spec.js';

export const PHOTO_LIMIT = 5_242_880;
export const PHOTO_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
/** PUT: the raw photo body. */
export const RAW_PHOTO_PATH = '/examples/photo';
/** POST: NewPet's fields and an optional photo part. */
export const MULTIPART_PET_PATH = '/examples/pets';

const errors = {
  '400': { $ref: '#/components/responses/BadRequest' },
  '401': { $ref: '#/components/responses/Unauthorized' },
  '413': { $ref: '#/components/responses/PayloadTooLarge' },
  '415': { $ref: '#/components/responses/UnsupportedMediaType' },
  default: { $ref: '#/components/responses/UnexpectedError' },
};

export function withUploadOperations(bundled: OpenApiDocument): OpenApiDocument {
  const document = structuredClone(bundled) as unknown as { paths: Record<string, unknown>; components: { schemas: Record<string, { required?: string[]; properties?: Record<string, unknown> }> } };
  const photo = { type: 'string', format: 'binary', maxLength: PHOTO_LIMIT };
  const newPet = document.components.schemas.NewPet;
  if (!newPet?.properties) throw new Error('the contract has no NewPet schema with properties');
  document.paths[RAW_PHOTO_PATH] = {
    put: {
      operationId: 'putPhotoExample',
      summary: 'Store an example photo',
      tags: ['Pets'],
      requestBody: { required: true, content: Object.fromEntries(PHOTO_TYPES.map((type) => [type, { schema: photo }])) },
      responses: { '204': { description: 'Stored.' }, ...errors },
    },
  };
  document.paths[MULTIPART_PET_PATH] = {
    post: {
      operationId: 'createPetMultipartExample',
      summary: 'Add an example pet with a photo',
      tags: ['Pets'],
      requestBody: {
        required: true,
        content: {
          'multipart/form-data': {
            schema: { type: 'object', additionalProperties: false, required: newPet.required ?? [], properties: { ...structuredClone(newPet.properties), photo } },
            encoding: { photo: { contentType: PHOTO_TYPES.join(', ') } },
          },
        },
      },
      responses: { '204': { description: 'Added.' }, ...errors },
    },
  };
  return document as unknown as OpenApiDocument;
}
