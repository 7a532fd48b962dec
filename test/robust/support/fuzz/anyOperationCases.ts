/**
 * Requests for any operation of the contract, built from what the spec declares of it alone: its
 * parameters (each schema's valid values, and text each schema refuses), its security, its
 * request body's media types, its path's methods. For the operations without a model of their
 * own here (the pet operations have one each, whose answers are predicted), so an operation
 * added to the spec is fuzzed the day it lands: whatever is sent, the answer keeps the contract
 * (a declared status, never a 5xx, an Error body on every refusal), and the faults the spec
 * itself defines get the refusal it defines.
 */
import fc from 'fast-check';
import { bodyNotAllowed, type InvalidCase } from './cases.js';
import { serialize } from './jsonText.js';
import { benignHeaders, pathOf, queryString, segment, unauthenticated, validAuth, wrongMethod, type Header } from './requestParts.js';
import { anyJson, invalidParameterText, validValue } from './schemaArbitrary.js';
import type { ContractSpec, OperationSpec, ParameterSpec } from './spec.js';
import type { WireRequest } from './wire.js';

export interface AnyOperationContext {
  contract: ContractSpec;
  op: OperationSpec;
  key: string;
  /** Values known to name a stored resource (the seeded pets' ids), tried for path parameters first. */
  knownIds: readonly number[];
}

/** The media types its 2xx answers declare. */
function successMediaTypes(op: OperationSpec): string[] {
  return Object.entries(op.responses).filter(([status]) => /^2(?:\d\d|XX)$/.test(status)).flatMap(([, response]) => response.mediaTypes);
}

/** Whether the operation asks for a key: its own `security`, else the document's. */
function isSecured(contract: ContractSpec, op: OperationSpec): boolean {
  const paths = contract.document.paths as Record<string, Record<string, { security?: unknown[] }>> | undefined;
  const own = paths?.[op.path]?.[op.method.toLowerCase()]?.security;
  const security = own ?? (contract.document.security as unknown[] | undefined) ?? [];
  return security.length > 0 && !security.some((requirement) => Object.keys(requirement as object).length === 0);
}

/**
 * A parameter's examples, as they are and with their numbers drawn again (`bytes=0-1023` becomes
 * `bytes=7-3`): text of the shape the spec shows, which a schema of any text would almost never give.
 */
function likeExamples(p: ParameterSpec): fc.Arbitrary<string> | undefined {
  if (p.examples.length === 0) return undefined;
  const example = fc.constantFrom(...p.examples);
  const redrawn = fc.tuple(example, fc.array(fc.nat({ max: 100_000 }), { minLength: 8, maxLength: 8 })).map(([text, numbers]) => {
    let i = 0;
    return text.replace(/\d+/g, () => String(numbers[i++ % numbers.length]));
  });
  return fc.oneof(example, redrawn);
}

/** A parameter's valid value as text on the wire; a path parameter tries the stored ids first. */
function validText(ctx: AnyOperationContext, p: ParameterSpec): fc.Arbitrary<string> {
  const fromSchema = validValue(ctx.contract, p.schema).map((v) => (typeof v === 'string' ? v : serialize(v)));
  const shaped = likeExamples(p);
  const drawn = shaped === undefined ? fromSchema : fc.oneof(fromSchema, shaped);
  const text = p.in === 'header' ? drawn.map(asHeaderText) : drawn;
  if (p.in !== 'path' || ctx.knownIds.length === 0) return text;
  return fc.oneof({ arbitrary: fc.constantFrom(...ctx.knownIds.map(String)), weight: 3 }, { arbitrary: text, weight: 1 });
}

/** What a header value cannot carry on the wire (node:http refuses to send it): dropped, not filtered (a filter can starve a generator). */
const NOT_HEADER_TEXT = /[^\t\x20-\x7e]/g;
const asHeaderText = (text: string) => text.replace(NOT_HEADER_TEXT, '');

/** The wire request for one value per parameter (path and query; header parameters as headers). */
function request(ctx: AnyOperationContext, values: Record<string, string>, headers: Header[]): WireRequest {
  const { contract, op } = ctx;
  const path: Record<string, string> = {};
  const query: Array<[string, string]> = [];
  const asHeaders: Header[] = [];
  for (const p of op.parameters) {
    const value = values[`${p.in}:${p.name}`];
    if (value === undefined) continue;
    if (p.in === 'path') path[p.name] = segment(value);
    else if (p.in === 'query') query.push([p.name, value]);
    else if (p.in === 'header') asHeaders.push([p.name, value]);
  }
  return { method: op.method, target: `${pathOf(contract, op, path)}${queryString(query)}`, headers: [...headers, ...asHeaders], transport: 'http' };
}

/** Every path and required parameter with a valid value; optional query and header ones now and then. */
function validValues(ctx: AnyOperationContext): fc.Arbitrary<Record<string, string>> {
  const entries = ctx.op.parameters
    .filter((p) => p.in !== 'cookie')
    .map((p) => {
      const value = validText(ctx, p);
      const always = p.in === 'path' || p.required;
      return fc.tuple(fc.constant(`${p.in}:${p.name}`), always ? value : fc.option(value, { nil: undefined }));
    });
  return fc.tuple(...entries).map((pairs) => {
    const values: Record<string, string> = {};
    for (const [name, value] of pairs) if (value !== undefined) values[name] = value;
    return values;
  });
}

/**
 * A body of each declared media type: JSON drawn from the schema or any JSON; other kinds any
 * bytes, or as often one of the type's example files (a valid photo), so what the operation
 * stores is stored too, and the reads after it answer it (ranges, conditions) rather than 404.
 */
function someBody(ctx: AnyOperationContext): fc.Arbitrary<{ mediaType: string; bytes: Buffer }> | undefined {
  const body = ctx.op.requestBody;
  if (!body) return undefined;
  const kinds: Array<fc.Arbitrary<{ mediaType: string; bytes: Buffer }>> = [];
  for (const mediaType of body.mediaTypes) {
    const value = body.schema ? fc.oneof(validValue(ctx.contract, body.schema), anyJson) : anyJson;
    kinds.push(value.map((v) => ({ mediaType, bytes: Buffer.from(serialize(v)) })));
  }
  for (const mediaType of body.otherMediaTypes) {
    // A multipart type needs its boundary named: without it, the body is malformed from the first byte.
    const sent = mediaType.startsWith('multipart/') ? `${mediaType}; boundary=fuzz` : mediaType;
    const random = fc.uint8Array({ maxLength: 4096 }).map((bytes) => Buffer.from(bytes));
    const examples = body.exampleFiles[mediaType] ?? [];
    const bytes = examples.length > 0 ? fc.oneof(random, fc.constantFrom(...examples)) : random;
    kinds.push(bytes.map((b) => ({ mediaType: sent, bytes: b })));
  }
  return kinds.length > 0 ? fc.oneof(...kinds) : undefined;
}

/**
 * A body the operation's schema takes, of its first JSON media type; none (`constant(undefined)`)
 * where it takes no body or need not have one; undefined where a required body is not JSON.
 */
function validBodyOf(ctx: AnyOperationContext): fc.Arbitrary<{ mediaType: string; bytes: Buffer } | undefined> | undefined {
  const body = ctx.op.requestBody;
  if (body === undefined || !body.required) return fc.constant(undefined);
  const mediaType = body.mediaTypes[0];
  if (mediaType === undefined || body.schema === undefined) return undefined;
  return validValue(ctx.contract, body.schema).map((value) => ({ mediaType, bytes: Buffer.from(serialize(value)) }));
}

export function anyOperationCases(ctx: AnyOperationContext): fc.Arbitrary<InvalidCase> {
  const { contract, op, key } = ctx;
  const auth = validAuth(key);
  const body = someBody(ctx);
  const withBody = (wire: WireRequest, sent: { mediaType: string; bytes: Buffer } | undefined): WireRequest =>
    sent ? { ...wire, headers: [...wire.headers, ['Content-Type', sent.mediaType]], body: sent.bytes } : wire;

  // Valid parameters, a key, a body of a declared kind with any content: the spec says nothing of the outcome.
  const valid = fc.record({ values: validValues(ctx), auth, extra: benignHeaders, sent: body ?? fc.constant(undefined) }).map(
    ({ values, auth: a, extra, sent }): InvalidCase => ({ family: 'declared parameters, any body of a declared kind', wire: withBody(request(ctx, values, [a, ...extra]), sent), expect: { kind: 'any' } }),
  );

  // One parameter with text its schema refuses, the others valid: a query parameter is a 400 naming it.
  const broken = op.parameters
    .filter((p) => p.in === 'path' || p.in === 'query' || p.in === 'header')
    .map((p) =>
      fc.record({ values: validValues(ctx), text: invalidParameterText(contract, p.schema)
          .filter((t) => !(p.in === 'path' && t === ''))
          .map((t) => (p.in === 'header' ? asHeaderText(t) : t)), sent: body ?? fc.constant(undefined) }).map(({ values, text, sent }): InvalidCase => ({
        family: `${p.in} ${p.name}: invalid value`,
        wire: withBody(request(ctx, { ...values, [`${p.in}:${p.name}`]: text }, [['Authorization', `Bearer ${key}`]]), sent),
        // A path segment can stop naming this operation (a 404), and some headers are ignored when
        // malformed (Range, RFC 9110 §14.2): only a query parameter's refusal is the spec's to say.
        expect: p.in === 'query' ? { kind: 'reject', statuses: [400], code: 'validation_failed', field: { in: 'query', name: p.name } } : { kind: 'any' },
      })),
    );

  const someValid = fc.record({ values: validValues(ctx), auth }).map(({ values, auth: a }) => request(ctx, values, [a]));
  const faults: Array<fc.Arbitrary<InvalidCase>> = [
    // A body of a kind the operation does not declare: 415 (an empty one is no body: a 400 where one is
    // required); a body where it takes none: 400, unread.
    body
      ? fc.record({ wire: someValid, text: fc.string({ minLength: 1, maxLength: 200 }) }).map(({ wire, text }): InvalidCase => ({ family: 'a media type it does not declare', wire: withBody(wire, { mediaType: 'text/plain; charset=utf-8', bytes: Buffer.from(text) }), expect: { kind: 'reject', statuses: [415], code: 'unsupported_media_type' } }))
      : fc.record({ wire: someValid, value: anyJson }).map(({ wire, value }): InvalidCase => ({ family: 'a body where it takes none', wire: withBody(wire, { mediaType: 'application/json', bytes: Buffer.from(serialize(value)) }), expect: bodyNotAllowed })),
    someValid.chain((wire) => wrongMethod(contract, op, wire.target, key)),
  ];
  if (isSecured(contract, op)) faults.push(unauthenticated(key, someValid));
  // An Accept that allows none of the media types its successes declare: 406 (RFC 9110 §15.5.7).
  // A declared range (image/*) can match anything, and an operation that answers no content has
  // nothing to negotiate: the spec defines no refusal for those.
  // The request must be valid up to the Accept (validation comes first): a required body is one its schema takes.
  const answered = successMediaTypes(op);
  const validBody = validBodyOf(ctx);
  if (answered.length > 0 && answered.every((type) => !type.includes('*')) && validBody !== undefined) {
    faults.push(
      fc.record({ wire: someValid, sent: validBody }).map(({ wire, sent }): InvalidCase => ({ family: 'an Accept it cannot answer', wire: withBody({ ...wire, headers: [...wire.headers, ['Accept', 'application/vnd.examples-fuzz+cbor']] }, sent), expect: { kind: 'reject', statuses: [406], code: 'not_acceptable' } })),
    );
  }

  return fc.oneof({ arbitrary: valid, weight: 4 }, ...broken.map((arbitrary) => ({ arbitrary, weight: 2 })), ...faults.map((arbitrary) => ({ arbitrary, weight: 1 })));
}
