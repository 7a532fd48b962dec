/**
 * Every fact of the interface document, and every decision of our own design notes, is found in
 * the bundled contract (generated/openapi.json).
 *
 * The facts are transcribed below as data, section by section (§ numbers are the interface
 * document's), so the test never reads anything outside this project. Each table row becomes one
 * test that names the rule it checks. Each fact is held exactly: a changed or missing value fails.
 *
 * An additive change leaves every fact true and must pass: a new optional field of a schema, a
 * new operation, a new minor version. What the document says stays as it says: its operations at
 * their method, path and id; its fields with their types; its required fields required and its
 * optional ones optional; and no new required field (a client of the document would not send it).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { validationViews } from '../../src/http/shapes/views.js';
import type { OpenApiDocument } from '../../src/shared/spec.js';

// ajv-formats ships CommonJS whose default export TypeScript sees one level deep.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document walked by hand
type Json = Record<string, any>;

const spec = JSON.parse(readFileSync(fileURLToPath(new URL('../../generated/openapi.json', import.meta.url)), 'utf8')) as Json;

// ---------------------------------------------------------------------------------------------
// A small resolver: follows local `$ref`s (`#/a/b~1c`) until the node is not a reference.
// ---------------------------------------------------------------------------------------------

function pointerGet(pointer: string): unknown {
  if (!pointer.startsWith('#/')) throw new Error(`Only local references are supported: ${pointer}`);
  let node: unknown = spec;
  for (const raw of pointer.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) throw new Error(`Unresolvable reference ${pointer}`);
    node = (node as Json)[key];
  }
  return node;
}

function deref(node: unknown): Json {
  let current = node;
  for (let hops = 0; current && typeof current === 'object' && '$ref' in current; hops++) {
    if (hops > 20) throw new Error('Reference cycle');
    current = pointerGet((current as { $ref: string }).$ref);
  }
  if (!current || typeof current !== 'object') throw new Error(`Expected an object, got ${JSON.stringify(current)}`);
  return current as Json;
}

const schemaRef = (name: string) => `#/components/schemas/${name}`;

/** A schema "is" the named component when it refers to it, directly or as the only `allOf` member. */
function refersTo(schema: Json | undefined, name: string): boolean {
  if (!schema) return false;
  if (schema.$ref === schemaRef(name)) return true;
  return Array.isArray(schema.allOf) && schema.allOf.length === 1 && schema.allOf[0].$ref === schemaRef(name);
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface Op {
  method: string;
  path: string;
  operationId: string;
  op: Json;
}

const allOperations: Op[] = Object.entries(spec.paths as Json).flatMap(([path, item]) =>
  METHODS.filter((m) => (item as Json)[m]).map((method) => ({ method, path, operationId: (item as Json)[method].operationId as string, op: (item as Json)[method] as Json })),
);

function operation(operationId: string): Json {
  const found = allOperations.find((o) => o.operationId === operationId);
  if (!found) throw new Error(`No operation ${operationId} in the spec`);
  return found.op;
}

function parameter(operationId: string, name: string): Json {
  const params = ((operation(operationId).parameters ?? []) as unknown[]).map(deref);
  const found = params.find((p) => p.name === name);
  if (!found) throw new Error(`${operationId} has no parameter ${name}`);
  return found;
}

function response(operationId: string, status: string): Json {
  const r = (operation(operationId).responses as Json)[status];
  if (!r) throw new Error(`${operationId} has no ${status} response`);
  return deref(r);
}

const schema = (name: string) => deref({ $ref: schemaRef(name) });

/** Picks the keys of `expected` from `actual`, so `toEqual` compares exactly those values. */
function pick(actual: Json, expected: Json): Json {
  return Object.fromEntries(Object.keys(expected).map((k) => [k, actual[k]]));
}

const sorted = (xs: Iterable<string>) => [...xs].sort();

/** "a PetStatus" or "integer, format int64, minimum 1": the fact in words, for test names. */
function describeSchema(fact: { ref?: unknown; schema?: Json } & Json): string {
  if (typeof fact.ref === 'string') return `a ${fact.ref}`;
  const s = (fact.schema ?? fact) as Json;
  return Object.entries(s)
    .map(([k, v]) => (k === 'type' ? String(v) : `${k} ${String(v)}`))
    .join(', ');
}

// ---------------------------------------------------------------------------------------------
// The facts, transcribed from the interface document.
// ---------------------------------------------------------------------------------------------

const OPERATIONS = [
  { section: '§4.1', method: 'get', path: '/pets', operationId: 'listPets' },
  { section: '§4.2', method: 'post', path: '/pets', operationId: 'createPet' },
  { section: '§4.3', method: 'get', path: '/pets/{petId}', operationId: 'getPet' },
];

const PET_STATUSES = ['available', 'pending', 'sold'];

/** `schema` is compared key by key on the resolved schema; `ref` names the component it must refer to. */
const PARAMETERS: { section: string; operationId: string; name: string; in: string; required: boolean; schema?: Json; ref?: string }[] = [
  { section: '§4.1', operationId: 'listPets', name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
  { section: '§4.1', operationId: 'listPets', name: 'status', in: 'query', required: false, ref: 'PetStatus' },
  { section: '§4.3', operationId: 'getPet', name: 'petId', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } },
];

/** Status → body schema, for every response the document names. */
const RESPONSES: { section: string; operationId: string; status: string; body: string }[] = [
  { section: '§4.1', operationId: 'listPets', status: '200', body: 'Pets' },
  { section: '§4.1', operationId: 'listPets', status: '401', body: 'Error' },
  { section: '§4.2', operationId: 'createPet', status: '201', body: 'Pet' },
  { section: '§4.2', operationId: 'createPet', status: '400', body: 'Error' },
  { section: '§4.2', operationId: 'createPet', status: '401', body: 'Error' },
  { section: '§4.3', operationId: 'getPet', status: '200', body: 'Pet' },
  { section: '§4.3', operationId: 'getPet', status: '401', body: 'Error' },
  { section: '§4.3', operationId: 'getPet', status: '404', body: 'Error' },
];

/** §2 object schemas: every field with its type (and format), and which fields are required. */
const OBJECT_SCHEMAS: { name: string; required: string[]; note?: string; fields: Record<string, Json | { ref: string }> }[] = [
  {
    name: 'NewPet',
    required: ['name', 'categoryId'],
    fields: { name: { type: 'string' }, categoryId: { type: 'integer', format: 'int64' }, status: { ref: 'PetStatus' } },
  },
  {
    name: 'Pet',
    // "every field of NewPet plus id (required)"; name and categoryId stay required as in NewPet.
    // `status` too, by our decision: an animal as returned always has one (NewPet's default applied).
    required: ['id', 'name', 'categoryId', 'status'],
    note: 'status by our decision',
    fields: { id: { type: 'integer', format: 'int64' }, name: { type: 'string' }, categoryId: { type: 'integer', format: 'int64' }, status: { ref: 'PetStatus' } },
  },
  {
    name: 'Error',
    required: ['code', 'message', 'status'],
    fields: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' } },
  },
];

// Our own design decisions, on top of the document.
const MAX_SAFE_ID = 9007199254740991; // 2^53 − 1
const ERROR_CODES = [
  'validation_failed',
  'invalid_json',
  'unauthorized',
  'not_found',
  'method_not_allowed',
  'payload_too_large',
  'unsupported_media_type',
  'internal_error',
  'not_implemented',
  'service_unavailable',
];
const STABILITY_VALUES = ['experimental', 'beta'];

// ---------------------------------------------------------------------------------------------

describe('§4 operations', () => {
  it.each(OPERATIONS.map((o) => [`${o.section} ${o.method.toUpperCase()} ${o.path} is operation ${o.operationId}`, o] as const))('%s', (_rule, { method, path, operationId }) => {
    expect((spec.paths as Json)[path]?.[method]?.operationId).toBe(operationId);
  });

  it('§4 each operationId of the document names exactly one operation, the documented one (other operations may be added)', () => {
    for (const o of OPERATIONS) {
      expect(
        allOperations.filter((x) => x.operationId === o.operationId).map((x) => `${x.method} ${x.path}`),
        o.operationId,
      ).toEqual([`${o.method} ${o.path}`]);
    }
  });

  // A media type added beside it (a form, 1.3.0) accepts more: the document's JSON body stays as it says.
  it('§4.2 createPet: the request body is required, application/json first, a NewPet', () => {
    const body = deref(operation('createPet').requestBody);
    expect(body.required).toBe(true);
    expect(Object.keys(body.content as Json)[0]).toBe('application/json');
    expect(body.content['application/json'].schema).toEqual({ $ref: schemaRef('NewPet') });
  });

  it('§4.1, §4.3 listPets and getPet take no request body', () => {
    expect(operation('listPets').requestBody).toBeUndefined();
    expect(operation('getPet').requestBody).toBeUndefined();
  });

  it('§4.3, §9 getPet is deprecated, with removal on 5 December 2030 (x-sunset)', () => {
    const op = operation('getPet');
    expect(op.deprecated).toBe(true);
    expect(typeof op['x-sunset']).toBe('string');
    expect(Date.parse(op['x-sunset'] as string)).toBe(Date.UTC(2030, 11, 5));
    expect(op.description).toContain('5 December 2030');
  });

  it('§4.3 getPet names its replacement: GET /pets with the status filter', () => {
    const op = operation('getPet');
    expect(op.description).toMatch(/`?GET \/pets`? with the `?status`? filter/);
    expect(op['x-replacement']).toBe('GET /pets with the status filter');
  });

  it('§9 of the document\'s operations, getPet is the only deprecated one', () => {
    expect(allOperations.filter((o) => o.op.deprecated === true && OPERATIONS.some((d) => d.operationId === o.operationId)).map((o) => o.operationId)).toEqual(['getPet']);
  });

  it('GET /store/orders is referred to by the document but undefined there, so it is not in the spec', () => {
    const paths = Object.keys(spec.paths as Json).map((p) => p.replace(/\/$/, '').toLowerCase());
    expect(paths).not.toContain('/store/orders');
  });
});

describe('§4 parameters', () => {
  it.each(PARAMETERS.map((p) => [`${p.section} ${p.operationId}: ${p.name} is in ${p.in}, ${p.required ? 'required' : 'not required'}, ${describeSchema(p)}`, p] as const))('%s', (_rule, fact) => {
    const p = parameter(fact.operationId, fact.name);
    expect(p.in).toBe(fact.in);
    expect(p.required ?? false).toBe(fact.required);
    if (fact.schema) expect(pick(deref(p.schema), fact.schema)).toEqual(fact.schema);
    if (fact.ref) expect(p.schema).toEqual({ $ref: schemaRef(fact.ref) });
  });

  it('§4.1 listPets: the status filter accepts exactly available, pending, sold', () => {
    expect(deref(parameter('listPets', 'status').schema).enum).toEqual(PET_STATUSES);
  });
});

describe('§4 responses', () => {
  it.each(RESPONSES.map((r) => [`${r.section} ${r.operationId} answers ${r.status} with an application/json ${r.body}`, r] as const))('%s', (_rule, { operationId, status, body }) => {
    const r = response(operationId, status);
    expect(Object.keys(r.content as Json)).toEqual(['application/json']);
    expect(r.content['application/json'].schema).toEqual({ $ref: schemaRef(body) });
  });

  it.each(OPERATIONS.map((o) => [`${o.section} ${o.operationId}: its only success status is the one the document names`, o] as const))('%s', (_rule, { operationId }) => {
    const documented = RESPONSES.filter((r) => r.operationId === operationId && r.status.startsWith('2')).map((r) => r.status);
    expect(Object.keys(operation(operationId).responses as Json).filter((s) => s.startsWith('2'))).toEqual(documented);
  });

  // 1.1.0's responses (409, 422, 429) and 1.4.0's 412 have the same fields under a schema of their own, so that
  // the codes of 1.0.0's responses stay exactly what 1.0.0 promised (spec: LimitError).
  const LIMIT_STATUSES = ['409', '412', '422', '429'];

  // 1.3.0's codes about an image's bytes likewise (spec: MediaError): a 416's body, or beside Error in a 400's oneOf.
  const ERROR_BODIES = ['Error', 'LimitError', 'GoneError', 'MediaError'];

  it('§2, §5 every error response (4xx, 5xx, default) of every operation is an application/json Error (LimitError for 409, 412, 422, 429; GoneError for a deprecated operation\'s 410; MediaError for a 416), or a oneOf of it and other error bodies; or, where a pasted operation declares them, Problem Details', () => {
    const seen: string[] = [];
    for (const { operationId, op } of allOperations) {
      for (const [status, raw] of Object.entries(op.responses as Json)) {
        if (!(status === 'default' || /^[45]/.test(status))) continue;
        const r = deref(raw);
        seen.push(`${operationId} ${status}`);
        // The other convention the server writes: RFC 9457 Problem Details (src/http/shapes/problems.ts).
        const types = Object.keys(r.content as Json);
        if (types.length > 0 && types.every((type) => type === 'application/problem+json' || type === 'application/problem+xml')) continue;
        expect(Object.keys(r.content as Json), `${operationId} ${status}`).toEqual(['application/json']);
        const body = LIMIT_STATUSES.includes(status) ? 'LimitError' : status === '410' && op.deprecated === true ? 'GoneError' : status === '416' ? 'MediaError' : 'Error';
        const schema = r.content['application/json'].schema as Json;
        if (Array.isArray(schema.oneOf)) {
          expect(schema.oneOf, `${operationId} ${status}`).toContainEqual({ $ref: schemaRef(body) });
          for (const member of schema.oneOf as Json[]) expect(ERROR_BODIES.map(schemaRef), `${operationId} ${status}`).toContain(member.$ref);
        } else expect(schema, `${operationId} ${status}`).toEqual({ $ref: schemaRef(body) });
      }
    }
    // The walk did visit the documented error responses.
    for (const r of RESPONSES.filter((x) => x.body === 'Error')) expect(seen).toContain(`${r.operationId} ${r.status}`);
  });
});

describe('§2 schemas', () => {
  it('§2 PetStatus is a string enum of exactly available, pending, sold', () => {
    expect(pick(schema('PetStatus'), { type: 0, enum: 0 })).toEqual({ type: 'string', enum: PET_STATUSES });
  });

  // Exactly: the document's required fields stay required, its optional ones optional, and a new
  // field may be added only as optional (a required one would break the document's clients).
  it.each(OBJECT_SCHEMAS.map((o) => [`§2 ${o.name} is an object whose required fields are exactly ${o.required.join(', ')}${o.note ? ` (${o.note})` : ''}; any added field is optional`, o] as const))('%s', (_rule, { name, required }) => {
    const s = schema(name);
    expect(s.type).toBe('object');
    expect(sorted(s.required as string[])).toEqual(sorted(required));
  });

  const fieldFacts = OBJECT_SCHEMAS.flatMap(({ name, fields }) => Object.entries(fields).map(([field, fact]) => ({ name, field, fact })));
  it.each(fieldFacts.map((f) => [`§2 ${f.name}.${f.field} is ${describeSchema(f.fact)}`, f] as const))('%s', (_rule, { name, field, fact }) => {
    const property = (schema(name).properties as Json)[field] as Json | undefined;
    expect(property, `${name}.${field}`).toBeDefined();
    if ('ref' in fact) expect(refersTo(property, fact.ref as string)).toBe(true);
    else expect(pick(deref(property), fact)).toEqual(fact);
  });

  /** The fields of an object schema that the document does not name: each must be optional. */
  const addedFields = (name: string) => {
    const documented = Object.keys(OBJECT_SCHEMAS.find((o) => o.name === name)?.fields ?? {});
    return Object.keys(schema(name).properties as Json).filter((f) => !documented.includes(f));
  };

  it.each(OBJECT_SCHEMAS.map((o) => [`§2 ${o.name} has the fields ${Object.keys(o.fields).join(', ')}; a field added since is optional`, o] as const))('%s', (_rule, { name, fields }) => {
    const properties = Object.keys(schema(name).properties as Json);
    expect(properties).toEqual(expect.arrayContaining(Object.keys(fields)));
    for (const added of addedFields(name)) expect(schema(name).required ?? [], `${name}.${added} is not in the document`).not.toContain(added);
  });

  it('§2 Pet has every field of NewPet plus id (and NewPet has no id)', () => {
    const newPet = Object.keys(schema('NewPet').properties as Json);
    expect(newPet).not.toContain('id');
    expect(Object.keys(schema('Pet').properties as Json)).toEqual(expect.arrayContaining([...newPet, 'id']));
  });

  it('§2 a field of Pet beyond NewPet and id is optional (the server may add one; it is not the document\'s)', () => {
    const newPet = Object.keys(schema('NewPet').properties as Json);
    const beyond = Object.keys(schema('Pet').properties as Json).filter((f) => f !== 'id' && !newPet.includes(f));
    for (const f of beyond) expect(schema('Pet').required ?? [], `Pet.${f}`).not.toContain(f);
  });

  it('§2 Pets is a JSON array of Pet', () => {
    const pets = schema('Pets');
    expect(pets.type).toBe('array');
    expect(pets.items).toEqual({ $ref: schemaRef('Pet') });
  });

  it('§2 Error has code, message and status, and the optional details', () => {
    expect(Object.keys(schema('Error').properties as Json)).toEqual(expect.arrayContaining(['code', 'message', 'status', 'details']));
    expect(schema('Error').required).not.toContain('details');
  });
});

describe('§5 authentication', () => {
  const bearerSchemes = Object.entries((spec.components?.securitySchemes ?? {}) as Json)
    .filter(([, s]) => {
      const scheme = deref(s);
      return scheme.type === 'http' && String(scheme.scheme).toLowerCase() === 'bearer';
    })
    .map(([name]) => name);

  it('§5 the spec declares an HTTP bearer security scheme', () => {
    expect(bearerSchemes).toEqual(['bearerApiKey']);
  });

  it.each(OPERATIONS.map((o) => [`§5 ${o.operationId} requires HTTP bearer authentication, with no anonymous alternative`, o] as const))('%s', (_rule, { operationId }) => {
    const requirements = (operation(operationId).security ?? spec.security) as Json[] | undefined;
    expect(requirements?.length ?? 0).toBeGreaterThan(0);
    for (const requirement of requirements ?? []) {
      // `{}` would make authentication optional; every alternative must name the bearer scheme.
      expect(Object.keys(requirement).some((name) => bearerSchemes.includes(name)), JSON.stringify(requirement)).toBe(true);
    }
  });
});

describe('§1, §9 servers and versions', () => {
  const servers = (spec.servers ?? []) as Json[];

  it('§1 there is a production and a staging server, each URL ending in /v1', () => {
    const production = servers.filter((s) => /^production\b/i.test(String(s.description)));
    const staging = servers.filter((s) => /^staging\b/i.test(String(s.description)));
    expect(production).toHaveLength(1);
    expect(staging).toHaveLength(1);
    expect(production[0]?.url).not.toBe(staging[0]?.url);
    for (const s of servers) expect(new URL(String(s.url)).pathname).toBe('/v1');
  });

  it('§9 info.version is 1.0.0, or a later minor or patch version of 1 (an additive release)', () => {
    expect(spec.info.version).toMatch(/^1\.\d+\.\d+$/);
  });

  it('the document is OpenAPI 3.1.x', () => {
    expect(spec.openapi).toMatch(/^3\.1\.\d+$/);
  });
});

describe('our design decisions', () => {
  it('NewPet.status defaults to available', () => {
    expect((schema('NewPet').properties as Json).status.default).toBe('available');
  });

  it('ids and categoryId are at most 2^53 − 1 (9007199254740991) wherever they appear', () => {
    expect(MAX_SAFE_ID).toBe(Number.MAX_SAFE_INTEGER);
    const places: [string, Json][] = [
      ['Pet.id', deref((schema('Pet').properties as Json).id)],
      ['Pet.categoryId', deref((schema('Pet').properties as Json).categoryId)],
      ['NewPet.categoryId', deref((schema('NewPet').properties as Json).categoryId)],
      ['getPet petId', deref(parameter('getPet', 'petId').schema)],
    ];
    for (const [where, s] of places) expect(s.maximum, where).toBe(MAX_SAFE_ID);
  });

  it('listPets takes an optional string query parameter cursor', () => {
    const cursor = parameter('listPets', 'cursor');
    expect(pick(cursor, { in: 0, required: 0 })).toEqual({ in: 'query', required: false });
    expect(deref(cursor.schema).type).toBe('string');
  });

  it('listPets 200 declares an optional string Link header', () => {
    const link = deref((response('listPets', '200').headers as Json | undefined)?.Link);
    expect(link.required ?? false).toBe(false);
    expect(deref(link.schema).type).toBe('string');
  });

  it('Error.code is a string enum including every error code of the design notes', () => {
    const code = deref((schema('Error').properties as Json).code);
    expect(code.type).toBe('string');
    expect(code.enum).toEqual(expect.arrayContaining(ERROR_CODES));
  });

  it('Error.details is optional', () => {
    expect((schema('Error').properties as Json).details).toBeDefined();
    expect(schema('Error').required).not.toContain('details');
  });

  it.each(OPERATIONS.map((o) => [`${o.operationId} has a default response that is an application/json Error`, o] as const))('%s', (_rule, { operationId }) => {
    const r = response(operationId, 'default');
    expect(r.content['application/json'].schema).toEqual({ $ref: schemaRef('Error') });
  });

  it('no operation has an x-stability value outside experimental, beta', () => {
    const outside = allOperations.filter((o) => 'x-stability' in o.op && !STABILITY_VALUES.includes(o.op['x-stability'] as string));
    expect(outside.map((o) => `${o.operationId}: ${String(o.op['x-stability'])}`)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Every example in the bundled spec validates against its schema (Ajv, JSON Schema 2020-12).
// ---------------------------------------------------------------------------------------------

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n <= 2 ** 31 - 1 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  // Each example against its direction's view: a request's without its readOnly fields required,
  // an answer's (a webhook's body too) without its writeOnly ones (src/http/shapes/views.ts).
  ajv.addSchema(validationViews(spec as unknown as OpenApiDocument), 'spec');
  return ajv;
}

const escapeKey = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');

interface Example {
  where: string;
  schemaPointer: string;
  value: unknown;
}

/**
 * Media types, parameters and headers: `example`, and `examples` (a map of Example objects) next to
 * a `schema`. Schemas: the `examples` array. Example values themselves are not walked into.
 */
function collectExamples(node: unknown, pointer: string, parentKey: string, out: Example[]): Example[] {
  if (Array.isArray(node)) {
    node.forEach((v, i) => collectExamples(v, `${pointer}/${i}`, parentKey, out));
    return out;
  }
  if (!node || typeof node !== 'object') return out;
  const obj = node as Json;
  const inPropertyMap = parentKey === 'properties' || parentKey === 'patternProperties';
  if (!inPropertyMap && obj.schema && typeof obj.schema === 'object') {
    const schemaPointer = `${pointer}/schema`;
    if ('example' in obj) out.push({ where: `${pointer}/example`, schemaPointer, value: obj.example });
    if (obj.examples && typeof obj.examples === 'object' && !Array.isArray(obj.examples)) {
      for (const [name, ex] of Object.entries(obj.examples as Json)) {
        const example = deref(ex);
        if ('value' in example) out.push({ where: `${pointer}/examples/${escapeKey(name)}`, schemaPointer, value: example.value });
      }
    }
  }
  if (!inPropertyMap && Array.isArray(obj.examples) && parentKey !== 'content') {
    obj.examples.forEach((value: unknown, i: number) => out.push({ where: `${pointer}/examples/${i}`, schemaPointer: pointer, value }));
  }
  for (const [key, value] of Object.entries(obj)) {
    if (!inPropertyMap && (key === 'example' || key === 'examples' || key === 'default' || key === 'enum' || key === 'const')) continue;
    collectExamples(value, `${pointer}/${escapeKey(key)}`, key, out);
  }
  return out;
}

/** Pointers of every Media Type object (the entries of a `content` map). */
function mediaTypePointers(node: unknown, pointer: string, parentKey: string, out: string[]): string[] {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return out;
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === 'example' || key === 'examples') continue;
    const child = `${pointer}/${escapeKey(key)}`;
    if (parentKey === 'content') out.push(child);
    else mediaTypePointers(value, child, key, out);
  }
  return out;
}

describe('examples', () => {
  const ajv = newAjv();
  const validatorFor = (pointer: string) => ajv.compile({ $ref: `spec${pointer.split('/').map((seg, i) => (i === 0 ? seg : encodeURIComponent(seg))).join('/')}` });
  const examples = collectExamples(spec, '#', '', []);

  it('the walk finds the examples of request bodies, responses, parameters, headers and schemas', () => {
    const where = examples.map((e) => e.where);
    expect(where).toContain('#/paths/~1pets/post/requestBody/content/application~1json/examples/minimal');
    expect(where).toContain('#/paths/~1pets/get/responses/200/content/application~1json/examples/firstPage');
    expect(where).toContain('#/components/responses/NotFound/content/application~1json/examples/notFound');
    expect(where).toContain('#/components/parameters/Limit/example');
    expect(where).toContain('#/components/headers/PetLocation/example');
    expect(where).toContain('#/components/schemas/CategoryId/examples/0');
  });

  // Bytes (an image, a file: a binary string) have no example a YAML file can hold, as lint's
  // media-type-examples rule says too: the docs show their schema.
  const isBytes = (pointer: string) => {
    const schema = (pointerGet(pointer) as Json).schema;
    if (schema === undefined) return false;
    const resolved = deref(schema);
    return resolved.format === 'binary' || (resolved.contentMediaType !== undefined && resolved.contentEncoding === undefined);
  };

  it('every media type in the spec has at least one example, bytes aside', () => {
    const mediaTypes = mediaTypePointers(spec, '#', '', []);
    expect(mediaTypes.length).toBeGreaterThanOrEqual(9);
    for (const mt of mediaTypes.filter((pointer) => !isBytes(pointer))) expect(examples.filter((e) => e.where.startsWith(`${mt}/`)).length, mt).toBeGreaterThan(0);
  });

  it('the validator rejects an example that breaks its schema (the check can fail)', () => {
    const validate = validatorFor('#/components/schemas/NewPet');
    expect(validate({ name: 'Biscuit', categoryId: 2 })).toBe(true);
    expect(validate({ name: 'Biscuit', categoryId: 'two' })).toBe(false);
    expect(validatorFor('#/components/schemas/Id')(MAX_SAFE_ID + 1)).toBe(false);
    const getPet200 = validatorFor('#/paths/~1pets~1{petId}/get/responses/200/content/application~1json/schema');
    expect(getPet200({ id: 1, name: 'Biscuit', categoryId: 2, status: 'available' })).toBe(true);
    expect(getPet200({ id: 1, name: 'Biscuit' })).toBe(false);
  });

  it.each(examples.map((e) => [e.where, e] as const))('%s validates against its schema', (_where, example) => {
    const validate = validatorFor(example.schemaPointer);
    const ok = validate(example.value);
    expect(ok ? [] : validate.errors).toEqual([]);
  });
});
