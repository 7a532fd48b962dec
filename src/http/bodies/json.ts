/**
 * A JSON body (`application/json`, every `+json` type): strict UTF-8 (raw-body's decoder would
 * quietly turn bad bytes into U+FFFD), then JSON, then no lone surrogate escape in any string
 * (../wellFormed.ts: stored as UTF-8 it would come back as U+FFFD). Never coerced: a JSON body's
 * `"3"` stays a string, and validation says so.
 */
import { isUtf8 } from 'node:buffer';
import { invalidFields, refuse } from '../../errors/refusal.js';
import type { Exchange } from '../exchange.js';
import { firstIllFormedString } from '../wellFormed.js';
import { readBytes } from './bytes.js';

export async function readJson(exchange: Exchange, limit: number): Promise<unknown> {
  const buffer = await readBytes(exchange, limit);
  if (!isUtf8(buffer)) throw refuse('invalid_json', 'notUtf8');
  let body: unknown;
  try {
    body = JSON.parse(buffer.toString('utf8')) as unknown;
  } catch {
    throw refuse('invalid_json', 'notJson');
  }
  // Only a \u escape can make a lone surrogate: the bytes are valid UTF-8.
  const field = buffer.includes('\\u') ? firstIllFormedString(body) : undefined;
  if (field !== undefined) throw invalidFields([{ in: 'body', field, message: 'is not well-formed Unicode: it holds a lone surrogate (an unpaired \\uD800-\\uDFFF escape)' }]);
  return body;
}
