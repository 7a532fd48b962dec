/**
 * Real PNG images of a given size for the upload proofs (test/robust/) and the benchmark (bench/):
 * 256 pixels wide, RGB, rows of random pixels stored without compression, with valid chunk CRCs,
 * so every image is distinct, any decoder reads it and a signature or format check passes.
 */
import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';

const CRC_TABLE = Int32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});
function crc32(bytes: Buffer): number {
  let c = -1;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}
function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * A real PNG of at most `bytes` bytes (within two rows of pixels, 1,538 bytes, of it; one row
 * at least): 256 pixels wide, RGB, rows of random pixels stored without compression, so every image
 * is distinct and any decoder reads it. Random pixels make a torn or mixed-up photo show as a
 * different hash, never as a lucky match.
 */
export function png(bytes: number): Buffer {
  const width = 256;
  const row = 1 + width * 3;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, adaptive filtering, no interlace
  // zlib's stored blocks add a few bytes each: fewer rows until the image fits.
  for (let height = Math.max(1, Math.floor(bytes / row)); ; height = Math.max(1, height - 1)) {
    const raw = randomBytes(row * height);
    for (let y = 0; y < height; y++) raw[y * row] = 0; // filter type None for every row
    ihdr.writeUInt32BE(height, 4);
    const image = Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr), pngChunk('IDAT', deflateSync(raw, { level: 0 })), pngChunk('IEND', Buffer.alloc(0))]);
    if (image.length <= bytes || height === 1) return image;
  }
}
