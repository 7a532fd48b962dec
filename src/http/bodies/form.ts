/**
 * An `application/x-www-form-urlencoded` body: UTF-8, decoded as the WHATWG URL standard says
 * (URLSearchParams: `+` is a space, percent escapes), into the fields its schema describes.
 */
import { isUtf8 } from 'node:buffer';
import { refuse } from '../../errors/refusal.js';
import type { Exchange } from '../exchange.js';
import { readBytes } from './bytes.js';
import type { DeclaredBody } from './declared.js';
import { FieldSet } from './fields.js';

export async function readForm(exchange: Exchange, declared: DeclaredBody): Promise<Record<string, unknown>> {
  const buffer = await readBytes(exchange, declared.limit);
  if (!isUtf8(buffer)) throw refuse('invalid_json', 'notUtf8');
  const fields = new FieldSet(declared.parts);
  for (const [name, value] of new URLSearchParams(buffer.toString('utf8'))) fields.add(name, value);
  return fields.values;
}
