/** A raw body (`application/octet-stream`, `image/*`, `text/*`, …): its bytes, within its limit. */
import type { Exchange } from '../exchange.js';
import { readBytes } from './bytes.js';
import type { Upload } from '../../shared/schemas.js';

export async function readRaw(exchange: Exchange, limit: number, mediaType: string): Promise<Upload> {
  const bytes = await readBytes(exchange, limit);
  return { bytes, size: bytes.length, mediaType, fileName: undefined };
}
