/**
 * The images the API stores (an animal's photo): their media types, and whether bytes are what
 * their media type says, by the signature every file of the format starts with. Only the first
 * bytes are read: a truncated or corrupt image past its signature is stored as sent (decoding
 * images is for whoever shows them; the service never does).
 */

/** The media types of a photo, as the spec declares them (`putPetPhoto`, createPet's `photo` part). */
export const PHOTO_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type PhotoMediaType = (typeof PHOTO_MEDIA_TYPES)[number];

/** The format's name, as a message says it. */
export const FORMAT_NAMES: Readonly<Record<PhotoMediaType, string>> = { 'image/png': 'PNG', 'image/jpeg': 'JPEG', 'image/webp': 'WebP' };

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff]);
const RIFF = Buffer.from('RIFF', 'latin1');
const WEBP = Buffer.from('WEBP', 'latin1');

export function isPhotoMediaType(mediaType: string): mediaType is PhotoMediaType {
  return (PHOTO_MEDIA_TYPES as readonly string[]).includes(mediaType);
}

/**
 * Whether `bytes` begin with the signature of `mediaType`: PNG's eight bytes (89 50 4E 47 0D 0A
 * 1A 0A), JPEG's SOI and the first marker's FF (FF D8 FF), WebP's RIFF container of form WEBP
 * (`RIFF`, four bytes of length, `WEBP`).
 */
export function hasSignatureOf(bytes: Uint8Array, mediaType: PhotoMediaType): boolean {
  const starts = (signature: Buffer, at = 0) => bytes.length >= at + signature.length && signature.every((byte, i) => bytes[at + i] === byte);
  switch (mediaType) {
    case 'image/png':
      return starts(PNG);
    case 'image/jpeg':
      return starts(JPEG);
    case 'image/webp':
      return starts(RIFF) && starts(WEBP, 8);
  }
}
