/**
 * createPet requests. Valid ones: a NewPet drawn from the spec's schema, written in any of the
 * equivalent JSON layouts, media-type spellings and framings (length, chunked). Invalid
 * ones: schema violations, malformed JSON, deep nesting, bodies around the size limit, other
 * media types, bad keys, and JSON strings in place of the object.
 */
import { randomUUID } from 'node:crypto';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { InvalidCase, NewPetSent, ValidCreateCase } from './cases.js';
import { serialize, type JsonValue, type Layout } from './jsonText.js';
import { benignHeaders, duplicateAuth, pathOf, unauthenticated, validAuth, type Header } from './requestParts.js';
import { invalidValue, recordOf, validValue } from './schemaArbitrary.js';
import { bodyLimitBytes, type ContractSpec, type JsonSchema, type OperationSpec } from './spec.js';
import type { WireRequest } from './wire.js';

export interface CreateContext {
  contract: ContractSpec;
  op: OperationSpec;
  key: string;
}

const layout: fc.Arbitrary<Layout> = fc.constantFrom('compact', 'spaced', 'escaped');

function bodySchema(op: OperationSpec): JsonSchema {
  if (!op.requestBody?.schema) throw new Error(`${op.operationId} has no application/json request body`);
  return op.requestBody.schema;
}

/** The spec's media type, in spellings that name the same thing (case, UTF-8 charset). */
function validMediaTypes(op: OperationSpec): string[] {
  return (op.requestBody?.mediaTypes ?? []).flatMap((m) => [m, `${m}; charset=utf-8`, m.toUpperCase(), `${m};charset="UTF-8"`]);
}

function post(path: string, headers: Header[], body: Buffer): WireRequest {
  return { method: 'POST', target: path, headers, body, transport: 'http' };
}

// Bytes that are not UTF-8: regressions.ts, invalidUtf8Body. The spec says nothing of
// Content-Encoding, so compressed bodies are not "valid": they are drawn with the open cases below.
type Framing = 'length' | 'chunked';

function frame(framing: Framing, body: Buffer): { headers: Header[]; body: Buffer } {
  switch (framing) {
    case 'chunked':
      return { headers: [['Transfer-Encoding', 'chunked']], body };
    case 'length':
      return { headers: [], body };
  }
}

let keysIssued = 0;
const runId = randomUUID();
/** An Idempotency-Key no other request of any run has used. */
const freshKey = () => `${runId}-${(keysIssued += 1)}`;

export function validPet(ctx: CreateContext): fc.Arbitrary<{ value: JsonValue; pet: NewPetSent }> {
  return validValue(ctx.contract, bodySchema(ctx.op)).map((value) => ({ value, pet: recordOf(value) as unknown as NewPetSent }));
}

export function validCreateCases(ctx: CreateContext): fc.Arbitrary<ValidCreateCase> {
  const path = pathOf(ctx.contract, ctx.op);
  return fc
    .record({
      pet: validPet(ctx),
      layout,
      mediaType: fc.constantFrom(...validMediaTypes(ctx.op)),
      framing: fc.constantFrom<Framing>('length', 'length', 'chunked'),
      auth: validAuth(ctx.key),
      extra: benignHeaders,
      // Sometimes an Idempotency-Key, in the draft's quoted form or bare: a first use creates as
      // without one. Unique per case (a counter, not the draw), so a repeated draw is no replay.
      keyed: fc.constantFrom<'none' | 'quoted' | 'bare'>('none', 'none', 'quoted', 'bare'),
    })
    .map(({ pet, layout: l, mediaType, framing, auth, extra, keyed }) => {
      const framed = frame(framing, Buffer.from(serialize(pet.value, l), 'utf8'));
      const key: Header[] = keyed === 'none' ? [] : [['Idempotency-Key', keyed === 'quoted' ? `"${freshKey()}"` : freshKey()]];
      return { family: `valid (${l}, ${framing}${keyed === 'none' ? '' : ', keyed'})`, pet: pet.pet, wire: post(path, [auth, ['Content-Type', mediaType], ...framed.headers, ...key, ...extra], framed.body) };
    });
}

/** Edits that turn JSON text into text that is not JSON (checked: the result must not parse). */
const breakJson = fc.oneof(
  fc.nat().map((at) => (t: string) => t.slice(0, at % t.length)),
  fc.tuple(fc.nat(), fc.constantFrom('{', '}', '[', ']', ',', ':', '"', '\\', 'x', '\u0000', '\u0001', '\n', "'", 'NaN', '/*c*/')).map(([at, s]) => (t: string) => t.slice(0, at % t.length) + s + t.slice(at % t.length)),
  fc.nat().map((at) => (t: string) => t.slice(0, at % t.length) + t.slice((at % t.length) + 1)),
  fc.constantFrom(
    (t: string) => `${t}x`,
    (t: string) => `${t}}`,
    (t: string) => `${t},`,
    (t: string) => `x${t}`,
    (t: string) => t.replace(/"/g, "'"),
    (t: string) => t.replace(/}$/, ',}'),
    (t: string) => t.replace(/"(\w+)":/, '$1:'),
    (t: string) => t.replace(/"categoryId":\s*\d+/, '"categoryId":NaN'),
    (t: string) => t.replace(/"categoryId":\s*\d+/, '"categoryId":Infinity'),
    (t: string) => t.replace(/"categoryId":\s*\d+/, '"categoryId":undefined'),
    (t: string) => t.replace(/"categoryId":\s*\d+/, '"categoryId":0x1F'),
    (t: string) => t.replace(/"categoryId":\s*\d+/, '"categoryId":01'),
    (t: string) => t.replace(/"categoryId":\s*\d+/, '"categoryId":+1'),
    (t: string) => t.replace(/"name":\s*"/, '"name":"\u0001'),
    (t: string) => t.replace(/"name":\s*"/, '"name":"\\x41'),
    (t: string) => t.replace(/"name":\s*"/, '"name":"\\u12'),
    (t: string) => `/* comment */${t}`,
    (t: string) => `${t}${t}`,
  ),
);

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Nesting `depth` levels deep, as arrays or objects, around `inner`. */
function nested(depth: number, shape: 'array' | 'object', inner: string): string {
  return shape === 'array' ? '['.repeat(depth) + inner + ']'.repeat(depth) : '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
}

/**
 * Exactly `size` bytes of `{"name":"…","categoryId":1}`, the name made of `fill` (1 to 4 UTF-8
 * bytes each) and padded with ASCII to the byte.
 */
function bodyOfSize(size: number, fill: string): Buffer {
  const head = '{"name":"';
  const tail = '","categoryId":1}';
  const room = size - head.length - tail.length;
  const per = Buffer.byteLength(fill);
  const count = Math.floor(room / per);
  const body = Buffer.from(head + fill.repeat(count) + 'a'.repeat(room - count * per) + tail, 'utf8');
  if (body.length !== size) throw new Error(`built ${body.length} bytes, wanted ${size}`);
  return body;
}

export function invalidCreateCases(ctx: CreateContext): fc.Arbitrary<InvalidCase> {
  const { contract, op, key } = ctx;
  const path = pathOf(contract, op);
  const limit = bodyLimitBytes(op);
  const schema = bodySchema(op);
  const auth: Header = ['Authorization', `Bearer ${key}`];
  const json: Header = ['Content-Type', 'application/json'];
  const validBody = fc.tuple(validPet(ctx), layout).map(([p, l]) => serialize(p.value, l));

  const schemaViolation = fc.tuple(invalidValue(contract, schema), layout).map(([v, l]): InvalidCase => ({
    family: `body: ${v.reason}`.slice(0, 80),
    wire: post(path, [auth, json], Buffer.from(serialize(v.value, l), 'utf8')),
    expect: { kind: 'reject', statuses: [400], code: 'validation_failed', field: { in: 'body', name: v.field } },
  }));

  const malformed = fc
    .tuple(validBody, breakJson)
    .map(([text, edit]) => Buffer.from(edit(text), 'utf8'))
    .filter((bytes) => !isJson(bytes.toString('utf8')))
    .map((bytes): InvalidCase => {
      const blank = bytes.toString('utf8').trim() === '';
      // A blank body is "no body" to the server (name and categoryId are then missing), not malformed JSON.
      return { family: 'malformed JSON', wire: post(path, [auth, json], bytes), expect: blank ? { kind: 'reject', statuses: [400] } : { kind: 'reject', statuses: [400], code: 'invalid_json' } };
    });

  const deep = fc
    .record({
      depth: fc.oneof(fc.constantFrom(1_000, 10_000, 13_000, 32_000), fc.integer({ min: 100, max: 40_000 })),
      shape: fc.constantFrom<'array' | 'object'>('array', 'object'),
      where: fc.constantFrom<'body' | 'name' | 'categoryId' | 'extra'>('body', 'name', 'categoryId', 'extra'),
    })
    .map(({ depth, shape, where }): InvalidCase => {
      const inner = nested(depth, shape, '1');
      const text = { body: inner, name: `{"name":${inner},"categoryId":1}`, categoryId: `{"name":"n","categoryId":${inner}}`, extra: `{"name":"n","categoryId":1,"x":${inner}}` }[where];
      const bytes = Buffer.from(text, 'utf8');
      return { family: `${depth} levels of ${shape} in ${where}`, wire: post(path, [auth, json], bytes), expect: { kind: 'reject', statuses: bytes.length > limit ? [413] : [400] } };
    });

  const sized = fc
    .record({
      size: fc.oneof(fc.constantFrom(limit - 1, limit, limit + 1, limit + 2, 2 * limit, 16 * limit), fc.integer({ min: limit - 2048, max: limit + 2048 })),
      fill: fc.constantFrom('a', '\u00e9', '\u4e2d', '\u{1f600}', '\u0301'),
    })
    .map(({ size, fill }): InvalidCase => ({
      family: `body of ${size} bytes (limit ${limit})`,
      wire: post(path, [auth, json], bodyOfSize(size, fill)),
      // Under the limit the body is read, and the name is far over its maxLength.
      expect: size > limit ? { kind: 'reject', statuses: [413], code: 'payload_too_large' } : { kind: 'reject', statuses: [400], code: 'validation_failed', field: { in: 'body', name: 'name' } },
    }));

  const specTypes = new Set((op.requestBody?.mediaTypes ?? []).map((m) => m.toLowerCase()));
  // A declared type that is not JSON (createPet's form) reads the body its own way: never a 415.
  const otherTypes = new Set((op.requestBody?.otherMediaTypes ?? []).map((m) => m.toLowerCase()));
  const essence = (type: string) => (type.split(';')[0] ?? '').trim().toLowerCase();
  const otherMediaType = fc
    .tuple(
      fc.constantFrom<string | undefined>(undefined, '', 'text/plain', 'text/json', 'application/json-patch+json', 'application/merge-patch+json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'application/javascript', 'application/json; charset=latin1', 'application/json; charset=iso-8859-1', 'application/json; charset=us-ascii', 'application/octet-stream', 'json'),
      validBody,
    )
    .filter(([type]) => type === undefined || (!specTypes.has(type.toLowerCase()) && !otherTypes.has(essence(type))))
    .map(([type, text]): InvalidCase => ({
      family: `Content-Type ${type === undefined ? 'missing' : JSON.stringify(type)}`,
      wire: post(path, type === undefined ? [auth] : [auth, ['Content-Type', type]], Buffer.from(text, 'utf8')),
      expect: { kind: 'reject', statuses: [415], code: 'unsupported_media_type' },
    }));

  // A JSON string is well-formed JSON but not an object, even when its text is a NewPet.
  const stringBody = fc
    .oneof(fc.string(), fc.constantFrom('[1]', '1', 'null', '{', 'x'), validBody)
    .map((s): InvalidCase => ({ family: 'a JSON string as the body', wire: post(path, [auth, json], Buffer.from(JSON.stringify(s), 'utf8')), expect: { kind: 'reject', statuses: [400], code: 'validation_failed' } }));

  // Duplicate keys and a byte-order mark: JSON leaves both to the parser; only the universal properties apply.
  const dupKeys = fc.tuple(validPet(ctx), fc.string({ maxLength: 8 })).map(([p, other]): InvalidCase => {
    const text = serialize(p.value).replace(/^\{/, `{"name":${JSON.stringify(other)},`);
    return { family: 'duplicate key', wire: post(path, [auth, json], Buffer.from(text, 'utf8')), expect: { kind: 'any' } };
  });
  const bom = validBody.map((text): InvalidCase => ({ family: 'UTF-8 byte-order mark', wire: post(path, [auth, json], Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')])), expect: { kind: 'any' } }));
  // Compressed, falsely labelled as compressed, or an unknown coding: the spec is silent, so only
  // the universal properties apply (no 5xx: a zlib error once surfaced as a 500).
  const encoded = fc.tuple(validBody, fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'compress', 'gzip, gzip', 'x-unknown'), fc.boolean()).map(([text, coding, compress]): InvalidCase => {
    const plain = Buffer.from(text, 'utf8');
    const body = compress && coding === 'gzip' ? gzipSync(plain) : compress && coding === 'deflate' ? deflateSync(plain) : compress && coding === 'br' ? brotliCompressSync(plain) : plain;
    return { family: `Content-Encoding ${coding}${compress ? '' : ' (body not encoded)'}`, wire: post(path, [auth, json, ['Content-Encoding', coding]], body), expect: { kind: 'any' } };
  });
  const dupAuth = fc.tuple(duplicateAuth(key), validBody).map(([headers, text]): InvalidCase => ({ family: 'duplicate Authorization', wire: post(path, [...headers, json], Buffer.from(text, 'utf8')), expect: { kind: 'any' } }));

  // An Idempotency-Key outside its declared bounds (1 to 255 characters \x21-\x7E) is a 400 naming
  // it, whatever the body: header parameters are validated before the handler runs.
  const badIdempotencyKey = fc
    .tuple(
      fc.oneof(
        fc.constantFrom('', ' ', 'has space', 'tab\tin', '\u00e9t\u00e9', 'k'.repeat(256), `"${'k'.repeat(300)}"`),
        fc.string({ unit: fc.constantFrom(' ', '\u00a0', '\u00ff', 'a', '"'), minLength: 1, maxLength: 8 }).filter((v) => /[^\x21-\x7E]/.test(v) && v.trim() === v && v !== ''),
      ),
      validBody,
    )
    .map(([value, text]): InvalidCase => ({
      family: 'Idempotency-Key out of bounds',
      wire: post(path, [auth, json, ['Idempotency-Key', value]], Buffer.from(text, 'utf8')),
      expect: { kind: 'reject', statuses: [400], code: 'validation_failed', field: { in: 'header', name: 'Idempotency-Key' } },
    }));

  // Whatever the body, a bad key is a 401: the key is checked before the body is read.
  const anyBody = fc.oneof(schemaViolation, malformed, sized, otherMediaType, validCreateCases(ctx)).map((c) => c.wire);

  return fc.oneof(
    { arbitrary: schemaViolation, weight: 8 },
    { arbitrary: malformed, weight: 4 },
    { arbitrary: deep, weight: 1 },
    { arbitrary: sized, weight: 1 },
    { arbitrary: otherMediaType, weight: 2 },
    { arbitrary: stringBody, weight: 1 },
    { arbitrary: dupKeys, weight: 1 },
    { arbitrary: bom, weight: 1 },
    { arbitrary: dupAuth, weight: 1 },
    { arbitrary: encoded, weight: 1 },
    { arbitrary: badIdempotencyKey, weight: 1 },
    { arbitrary: unauthenticated(key, anyBody), weight: 3 },
  );
}
