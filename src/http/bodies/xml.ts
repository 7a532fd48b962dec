/**
 * An XML body (`application/xml`, `text/xml`, every `+xml` type): UTF-8, within its limit, read
 * into the fields its schema describes by the schema's `xml` objects (../shapes/xml.ts). Its
 * leaves are text, which validation coerces by the schema as it does a form's. A body that is not
 * well-formed, or that declares a DOCTYPE, is a 400 naming the body.
 */
import { isUtf8 } from 'node:buffer';
import { invalidFields } from '../../errors/refusal.js';
import type { Exchange } from '../exchange.js';
import { readXml, XmlRefused } from '../shapes/xml.js';
import { readBytes } from './bytes.js';
import type { DeclaredBody } from './declared.js';

export async function readXmlBody(exchange: Exchange, declared: DeclaredBody): Promise<unknown> {
  const buffer = await readBytes(exchange, declared.limit);
  const refused = (message: string) => invalidFields([{ in: 'body', field: '', message }]);
  if (!isUtf8(buffer)) throw refused('is not valid UTF-8');
  try {
    return readXml(buffer.toString('utf8'), declared.schema);
  } catch (error) {
    if (error instanceof XmlRefused) throw refused(error.message);
    throw error;
  }
}
