/**
 * What an operation's `requestBody` declares, per media type, as the body reader needs it: the
 * kind of body, its schema, and its byte limits. Limits come from the spec, under the server's
 * bounds: a binary string's `maxLength` is its byte limit (a raw body's, a file part's); a JSON
 * body or a form is at most MAX_BODY_BYTES; a multipart body at most the sum of its parts' limits.
 * Built once per operation.
 */
import type { Operation } from 'openapi-backend';
import { kindOf, type BodyKind } from './mediaType.js';

/** A JSON body, a form, one text field of a multipart body. */
export const MAX_BODY_BYTES = 64 * 1024;
/** The server's bound on any body: a raw body or a multipart one, whatever the spec says. */
export const MAX_UPLOAD_BYTES = 16 * 1024 * 1024;
/** Parts of one multipart body, and items of an array property that declares no `maxItems`. */
export const MAX_PARTS = 100;
/** A multipart body's boundaries and part headers, besides the parts' own bytes. */
const MULTIPART_OVERHEAD = 16 * 1024;

export type Schema = Record<string, unknown>;

/** One property of a multipart body, as its parts are read. */
export interface PartRule {
  /** A file part (a binary string), else a text field coerced by its schema. */
  binary: boolean;
  /** An array property: the part may repeat, up to `maxItems`. */
  array: boolean;
  maxItems: number;
  /** Bytes one part may have. */
  limit: number;
  /** `encoding.<name>.contentType`: the media types a file part may have; undefined: any. */
  contentTypes: readonly string[] | undefined;
  /** A field whose encoding is JSON (`contentType: application/json`, or none for an object): its text is parsed as JSON, then validated, never coerced. */
  json: boolean;
}

export interface DeclaredBody {
  /** As the spec writes it (`image/*` is a range). */
  mediaType: string;
  kind: BodyKind;
  schema: Schema | undefined;
  /** Bytes the whole body may have. */
  limit: number;
  /** A form's or a multipart body's properties' rules, by name. */
  parts: ReadonlyMap<string, PartRule>;
}

export interface DeclaredBodies {
  required: boolean;
  mediaTypes: readonly string[];
  byType: ReadonlyMap<string, DeclaredBody>;
}

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A string of bytes: `format: binary` (OpenAPI 3.0's way), or a `contentMediaType` without an encoding (3.1's). */
export function isBinary(schema: unknown): boolean {
  if (!isSchema(schema)) return false;
  return schema.format === 'binary' || (schema.contentMediaType !== undefined && schema.contentEncoding === undefined);
}

/** An object schema: `type: object`, or properties without a type. */
const isObjectSchema = (schema: unknown): boolean => isSchema(schema) && (schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object')) || (schema.type === undefined && isSchema(schema.properties)));

const byteLimit = (schema: unknown, bound: number): number => (isSchema(schema) && typeof schema.maxLength === 'number' ? Math.min(schema.maxLength, bound) : bound);

function partRules(schema: Schema | undefined, encoding: unknown): Map<string, PartRule> {
  const rules = new Map<string, PartRule>();
  const properties = isSchema(schema?.properties) ? schema.properties : {};
  const encodings = isSchema(encoding) ? encoding : {};
  for (const [name, property] of Object.entries(properties)) {
    const array = isSchema(property) && property.type === 'array';
    const item = array && isSchema(property.items) ? property.items : property;
    const binary = isBinary(item);
    const declared = isSchema(encodings[name]) ? encodings[name].contentType : undefined;
    rules.set(name, {
      binary,
      array,
      maxItems: array && typeof property.maxItems === 'number' ? Math.min(property.maxItems, MAX_PARTS) : array ? MAX_PARTS : 1,
      limit: binary ? byteLimit(item, MAX_UPLOAD_BYTES) : MAX_BODY_BYTES,
      contentTypes: typeof declared === 'string' ? declared.split(',').map((type) => type.trim().toLowerCase()) : undefined,
      // An object part without an encoding is JSON too: OpenAPI's default contentType for an object (or an array of them).
      json: !binary && (typeof declared === 'string' ? declared.split(',').some((type) => kindOf(type.trim().toLowerCase()) === 'json') : isObjectSchema(item)),
    });
  }
  return rules;
}

function describe(mediaType: string, content: unknown): DeclaredBody {
  const kind = kindOf(mediaType.toLowerCase());
  // A copy: openapi-backend, compiling its own body validator, takes file parts out of the `required` of the schema it is given.
  const schema = isSchema(content) && isSchema(content.schema) ? structuredClone(content.schema) : undefined;
  const parts = kind === 'multipart' || kind === 'form' ? partRules(schema, isSchema(content) ? content.encoding : undefined) : new Map<string, PartRule>();
  let limit = MAX_BODY_BYTES;
  if (kind === 'raw') limit = byteLimit(schema, MAX_UPLOAD_BYTES);
  if (kind === 'multipart') {
    let sum = MULTIPART_OVERHEAD;
    for (const rule of parts.values()) sum += rule.limit * rule.maxItems;
    limit = Math.min(sum, MAX_UPLOAD_BYTES);
  }
  return { mediaType, kind, schema, limit, parts };
}

const cache = new WeakMap<Operation, DeclaredBodies | null>();

/** The bodies an operation declares, or undefined when it takes none. */
export function declaredBodies(operation: Operation): DeclaredBodies | undefined {
  let declared = cache.get(operation);
  if (declared === undefined) {
    const requestBody = operation.requestBody as { required?: boolean; content?: Record<string, unknown> } | undefined;
    const content = requestBody?.content ?? {};
    declared = requestBody === undefined ? null : { required: requestBody.required === true, mediaTypes: Object.keys(content), byType: new Map(Object.entries(content).map(([type, entry]) => [type, describe(type, entry)])) };
    cache.set(operation, declared);
  }
  return declared ?? undefined;
}
