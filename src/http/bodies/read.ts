/**
 * Reads a request body as the operation declares it for the request's media type: the declared
 * media type the request's matches (./mediaType.ts), refused with a 415 naming those declared when
 * none does; a declared Content-Length over that body's limit refused before a byte is read; then
 * the reader of its kind. A refused body stays `unread` where reading stopped, so the answer takes
 * care of the rest (./unread.ts, answerAfterBody).
 */
import { refuse } from '../../errors/refusal.js';
import type { Exchange } from '../exchange.js';
import type { DeclaredBodies, DeclaredBody } from './declared.js';
import { readForm } from './form.js';
import { readJson } from './json.js';
import { matchDeclared, requestMediaType } from './mediaType.js';
import { readMultipart } from './multipart.js';
import { readRaw } from './raw.js';
import { readXmlBody } from './xml.js';

export interface ReadBody {
  declared: DeclaredBody;
  /** The request's own media type (`image/png` where `image/*` is declared). */
  mediaType: string;
  value: unknown;
}

const isUtf8Charset = (charset: string | undefined) => charset === undefined || charset === 'utf-8' || charset === 'utf8';

export async function readBody(exchange: Exchange, bodies: DeclaredBodies): Promise<ReadBody> {
  const { req } = exchange;
  const media = requestMediaType(req);
  const matched = media === undefined ? undefined : matchDeclared(media.type, bodies.mediaTypes);
  const declared = matched === undefined ? undefined : bodies.byType.get(matched);
  const encoding = req.headers['content-encoding'];
  // Compressed bodies are refused too: inflating invites bombs, and the limits are on what is sent.
  const compressed = encoding !== undefined && encoding.toLowerCase() !== 'identity';
  if (media === undefined || declared === undefined || compressed || (declared.kind !== 'multipart' && declared.kind !== 'raw' && !isUtf8Charset(media.charset))) {
    throw refuse('unsupported_media_type', 'notAccepted', bodies.mediaTypes);
  }
  if (Number(req.headers['content-length']) > declared.limit) throw refuse('payload_too_large', 'body', declared.limit);
  let value: unknown;
  switch (declared.kind) {
    case 'json':
      value = await readJson(exchange, declared.limit);
      break;
    case 'form':
      value = await readForm(exchange, declared);
      break;
    case 'xml':
      value = await readXmlBody(exchange, declared);
      break;
    case 'multipart':
      value = await readMultipart(exchange, declared);
      break;
    case 'raw':
      value = await readRaw(exchange, declared.limit, media.type);
      break;
  }
  return { declared, mediaType: media.type, value };
}
