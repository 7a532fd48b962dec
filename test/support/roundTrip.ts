/**
 * "A field the spec accepts in a request body comes back where the spec says it does", derived
 * from the contract at test time, so it covers fields added later.
 *
 * Everything here is read from an OpenAPI document (by default the bundled contract,
 * generated/openapi.json; a test can pass a modified copy): the createPet request schema (NewPet),
 * the schemas of createPet's 201, getPet's 200 and listPets' 200 items (Pet), their properties,
 * `required` lists and defaults. `$ref`s are resolved by dereference-json-schema, the resolver
 * openapi-backend itself uses in quick mode (so the test reads the spec as the server does);
 * `allOf` is followed as the spec writes it (`status`: `default: available` beside
 * `allOf: [$ref PetStatus]`).
 *
 * - `samplePet(document)`: a valid NewPet with EVERY property filled (required and optional), from
 *   the spec's examples, enums and bounds, preferring values that differ from a property's
 *   default, so a server that ignores a field and applies the default is caught too.
 * - `expectedPet(id, sent, document)`: what must come back for `sent`: the sent fields the response
 *   declares, the spec's defaults for absent optional ones, and `id`.
 * - `petDifferences` / `missingFields`: whole-object comparison that names every field lost,
 *   changed or unexpected.
 * - `checkRoundTrip(apiBase, key, document)`: against any running server, creates `samplePet`
 *   and reads it back through the 201, getPet and listPets; resolves with the problems, each
 *   naming its field (empty when everything came back).
 */
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
// The module itself, not the package index: Node finds its named export (the index re-exports it dynamically).
import { dereferenceSync } from 'dereference-json-schema/dereference.js';
import { nextLink } from '../../client/index.js';

// ajv-formats ships CommonJS whose default export TypeScript sees one level deep.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON documents walked by hand
export type Json = Record<string, any>;
export type PetRecord = Record<string, unknown>;

const CONTRACT_PATH = new URL('../../generated/openapi.json', import.meta.url);

/** The bundled contract, parsed afresh (callers may modify their copy). */
export function loadDocument(path: string | URL = CONTRACT_PATH): Json {
  return JSON.parse(readFileSync(path, 'utf8')) as Json;
}

const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

// ---------------------------------------------------------------------------------------------
// Dereferencing, with a loud failure for a `$ref` that does not resolve (the library answers null).
// ---------------------------------------------------------------------------------------------

/** Walks the original beside its dereferenced copy: every `$ref` of the original must have a target. */
function checkResolved(original: unknown, resolved: unknown, path: string): void {
  if (Array.isArray(original)) {
    original.forEach((item, i) => checkResolved(item, Array.isArray(resolved) ? resolved[i] : undefined, `${path}/${i}`));
    return;
  }
  if (!isRecord(original)) return;
  if (typeof original.$ref === 'string') {
    if (resolved === null || resolved === undefined || (isRecord(resolved) && typeof resolved.$ref === 'string')) throw new Error(`${path}: $ref ${original.$ref} does not resolve`);
    return;
  }
  for (const [key, value] of Object.entries(original)) checkResolved(value, isRecord(resolved) ? resolved[key] : undefined, `${path}/${key}`);
}

const dereferenced = new WeakMap<Json, Json>();

/** The document with every local `$ref` replaced by its target (computed once per document object). */
export function dereference(document: Json): Json {
  let result = dereferenced.get(document);
  if (!result) {
    // A clone: the library caches by object identity, and a caller may modify its document later.
    result = dereferenceSync(structuredClone(document)) as Json;
    checkResolved(document, result, '#');
    dereferenced.set(document, result);
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Reading schemas as the spec writes them: own keywords first, then the `allOf` members.
// ---------------------------------------------------------------------------------------------

/** The schema and its `allOf` members, depth first: where a keyword may be written. */
function parts(schema: Json): Json[] {
  const members = Array.isArray(schema.allOf) ? (schema.allOf as unknown[]).filter(isRecord) : [];
  return [schema, ...members.flatMap(parts)];
}

/** The first value of `keyword` in the schema or its `allOf` members. */
function keyword(schema: Json, name: string): unknown {
  for (const part of parts(schema)) if (part[name] !== undefined) return part[name];
  return undefined;
}

/** Properties of an object schema, merged over its `allOf` members (the outer schema's win). */
export function propertiesOf(schema: Json): Record<string, Json> {
  const merged: Record<string, Json> = {};
  for (const part of [...parts(schema)].reverse()) if (isRecord(part.properties)) Object.assign(merged, part.properties);
  return merged;
}

/** The union of the `required` lists of a schema and its `allOf` members. */
export function requiredOf(schema: Json): string[] {
  return [...new Set(parts(schema).flatMap((p) => (Array.isArray(p.required) ? (p.required as string[]) : [])))];
}

/** The `default` of a property, its own or one of its `allOf` members'. */
export function defaultOf(schema: Json): unknown {
  return keyword(schema, 'default');
}

function examplesOf(schema: Json): unknown[] {
  const out: unknown[] = [];
  for (const part of parts(schema)) {
    if (Array.isArray(part.examples)) out.push(...(part.examples as unknown[]));
    if (part.example !== undefined) out.push(part.example);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The pet operations of the contract.
// ---------------------------------------------------------------------------------------------

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface FoundOperation {
  method: string;
  /** As the spec writes it, relative to the API base: `/pets/{petId}`. */
  path: string;
  op: Json;
}

function findOperation(document: Json, operationId: string): FoundOperation {
  for (const [path, item] of Object.entries((document.paths ?? {}) as Json)) {
    for (const method of METHODS) {
      const op = isRecord(item) ? item[method] : undefined;
      if (isRecord(op) && op.operationId === operationId) return { method: method.toUpperCase(), path, op };
    }
  }
  throw new Error(`the spec has no operation ${operationId}`);
}

/** The operation's success status (its one 2xx response) and that response's JSON schema. */
function successResponse(found: FoundOperation): { status: number; schema: Json } {
  const responses = (found.op.responses ?? {}) as Json;
  const statuses = Object.keys(responses).filter((s) => /^2\d\d$/.test(s));
  if (statuses.length !== 1) throw new Error(`${String(found.op.operationId)}: expected one 2xx response, found ${statuses.join(', ') || 'none'}`);
  const status = statuses[0] as string;
  const schema = (responses[status] as Json | undefined)?.content?.['application/json']?.schema;
  if (!isRecord(schema)) throw new Error(`${String(found.op.operationId)} ${status}: no application/json schema`);
  return { status: Number(status), schema };
}

export interface PetContract {
  /** The dereferenced document. */
  document: Json;
  createPet: { method: string; path: string; status: number; request: Json; response: Json };
  getPet: { method: string; path: string; status: number; parameter: string; response: Json };
  listPets: { method: string; path: string; status: number; item: Json; pageSize: { name: string; max: number } | undefined };
  /** NewPet: every property, the required ones, and the defaults of the optional ones. */
  request: { properties: Record<string, Json>; required: string[]; defaults: PetRecord };
  /** Pet as createPet's 201 declares it. */
  response: { properties: Record<string, Json>; required: string[] };
}

const contracts = new WeakMap<Json, PetContract>();

/** The pet operations' schemas, read from `document` (default: the bundled contract). */
export function petContract(document: Json = loadDocument()): PetContract {
  const cached = contracts.get(document);
  if (cached) return cached;
  const doc = dereference(document);

  const create = findOperation(doc, 'createPet');
  const request = create.op.requestBody?.content?.['application/json']?.schema as Json | undefined;
  if (!isRecord(request)) throw new Error('createPet: no application/json request body schema');
  const created = successResponse(create);

  const get = findOperation(doc, 'getPet');
  const pathParameters = ((get.op.parameters ?? []) as Json[]).filter((p) => p.in === 'path');
  if (pathParameters.length !== 1) throw new Error(`getPet: expected one path parameter, found ${pathParameters.length}`);
  const got = successResponse(get);

  const list = findOperation(doc, 'listPets');
  const listed = successResponse(list);
  const item = listed.schema.items as Json | undefined;
  if (!isRecord(item)) throw new Error('listPets 200: not an array of a schema');
  // Paging (`limit`, Link rel="next") is our documented design; the largest page needs the fewest requests.
  const limit = ((list.op.parameters ?? []) as Json[]).find((p) => p.in === 'query' && p.name === 'limit');
  const max = limit ? keyword(limit.schema as Json, 'maximum') : undefined;

  const properties = propertiesOf(request);
  const required = requiredOf(request);
  const defaults: PetRecord = {};
  for (const [name, schema] of Object.entries(properties)) {
    const value = defaultOf(schema);
    if (value !== undefined && !required.includes(name)) defaults[name] = value;
  }

  const contract: PetContract = {
    document: doc,
    createPet: { method: create.method, path: create.path, status: created.status, request, response: created.schema },
    getPet: { method: get.method, path: get.path, status: got.status, parameter: String(pathParameters[0]?.name), response: got.schema },
    listPets: { method: list.method, path: list.path, status: listed.status, item, pageSize: typeof max === 'number' ? { name: 'limit', max } : undefined },
    request: { properties, required, defaults },
    response: { properties: propertiesOf(created.schema), required: requiredOf(created.schema) },
  };
  contracts.set(document, contract);
  return contract;
}

// ---------------------------------------------------------------------------------------------
// Validation (Ajv, JSON Schema 2020-12, the spec's integer formats).
// ---------------------------------------------------------------------------------------------

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n <= 2 ** 31 - 1 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  return ajv;
}

const validators = new WeakMap<Json, ValidateFunction>();

/** A validator for a dereferenced schema (compiled once per schema object). */
export function validatorFor(schema: Json): ValidateFunction {
  let fn = validators.get(schema);
  if (!fn) {
    fn = newAjv().compile(schema);
    validators.set(schema, fn);
  }
  return fn;
}

/** Ajv's errors in one line each: `/status must be equal to one of the allowed values`. */
export function schemaErrors(schema: Json, value: unknown): string[] {
  const validate = validatorFor(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) => {
    const extra = e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : '';
    return `${e.instancePath || '(the body)'} ${e.message ?? e.keyword}${extra}`;
  });
}

// ---------------------------------------------------------------------------------------------
// A sample pet with every property, and the pet that must come back.
// ---------------------------------------------------------------------------------------------

const FORMAT_SAMPLES: Record<string, string> = {
  'date-time': '2026-11-21T12:34:56Z',
  date: '2026-11-21',
  time: '12:34:56Z',
  email: 'sample@animal-store.example',
  uri: 'https://animal-store.example/sample',
  url: 'https://animal-store.example/sample',
  uuid: '7f0b6a3e-2c1d-4e5f-9a8b-1c2d3e4f5a6b',
  hostname: 'animal-store.example',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
};

/** A value for `schema`, its examples first, that is not its default when the schema allows another. */
export function sampleValue(schema: Json, where: string): unknown {
  const fallback = defaultOf(schema);
  const constant = keyword(schema, 'const');
  if (constant !== undefined) return constant;
  const enumeration = keyword(schema, 'enum');
  const candidates = [...examplesOf(schema), ...(Array.isArray(enumeration) ? enumeration : [])].filter((v) => validatorFor(schema)(v));
  const differing = candidates.find((v) => !isDeepStrictEqual(v, fallback));
  if (differing !== undefined) return structuredClone(differing);
  if (candidates.length > 0) return structuredClone(candidates[0]);

  let type = keyword(schema, 'type');
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') ?? type[0];
  if (type === undefined && Object.keys(propertiesOf(schema)).length > 0) type = 'object';
  let value: unknown;
  switch (type) {
    case 'object': {
      const out: PetRecord = {};
      for (const [name, property] of Object.entries(propertiesOf(schema))) out[name] = sampleValue(property, `${where}.${name}`);
      value = out;
      break;
    }
    case 'array': {
      const items = keyword(schema, 'items');
      const minItems = Number(keyword(schema, 'minItems') ?? 1);
      value = Array.from({ length: Math.max(1, minItems) }, (_, i) => sampleValue(isRecord(items) ? items : {}, `${where}[${i}]`));
      break;
    }
    case 'string': {
      const format = keyword(schema, 'format');
      const min = Number(keyword(schema, 'minLength') ?? 0);
      const max = Number(keyword(schema, 'maxLength') ?? Number.POSITIVE_INFINITY);
      let text = typeof format === 'string' && FORMAT_SAMPLES[format] ? FORMAT_SAMPLES[format] : `sample ${where}`;
      if (text.length > max) text = text.slice(0, max);
      if (text.length < min) text = text.padEnd(min, 'x');
      value = text;
      break;
    }
    case 'integer':
    case 'number': {
      const min = keyword(schema, 'minimum');
      const max = keyword(schema, 'maximum');
      let n = typeof min === 'number' ? Math.ceil(min) + 1 : 7;
      if (typeof max === 'number' && n > max) n = Math.floor(max);
      if (n === fallback && (typeof max !== 'number' || n + 1 <= max)) n += 1;
      value = n;
      break;
    }
    case 'boolean':
      value = fallback !== true;
      break;
    case 'null':
      value = null;
      break;
    default:
      throw new Error(`samplePet: ${where} has no type, example or enum to build a value from; give it an example in the spec`);
  }
  const problems = schemaErrors(schema, value);
  if (problems.length > 0) throw new Error(`samplePet: cannot build a valid value for ${where} (tried ${JSON.stringify(value)}: ${problems.join('; ')}); give it an example in the spec`);
  return value;
}

/**
 * A valid createPet body with every property of the request schema filled, required and optional,
 * each (where the schema allows) with a value other than its default.
 */
export function samplePet(document: Json = loadDocument()): PetRecord {
  const contract = petContract(document);
  const pet: PetRecord = {};
  for (const [name, schema] of Object.entries(contract.request.properties)) pet[name] = sampleValue(schema, name);
  const problems = schemaErrors(contract.createPet.request, pet);
  if (problems.length > 0) throw new Error(`samplePet built an invalid request body ${JSON.stringify(pet)}: ${problems.join('; ')}`);
  return pet;
}

/**
 * The pet the server must answer for `sent` once it assigned `id`: every sent field the response
 * schema declares, the spec's default for each absent optional field that has one, and `id`.
 * Keys follow the response schema's property order.
 */
export function expectedPet(id: number, sent: PetRecord, document: Json = loadDocument()): PetRecord {
  const contract = petContract(document);
  const withDefaults: PetRecord = { ...contract.request.defaults, ...sent, id };
  const pet: PetRecord = {};
  for (const name of Object.keys(contract.response.properties)) if (name in withDefaults) pet[name] = withDefaults[name];
  return pet;
}

/**
 * Response properties the request cannot set (besides `id`): the server assigns them, so their
 * values are not predicted, only their presence (when required) and their stability across reads.
 */
export function serverAssignedFields(document: Json = loadDocument()): string[] {
  const contract = petContract(document);
  return Object.keys(contract.response.properties).filter((name) => name !== 'id' && !(name in contract.request.properties));
}

// ---------------------------------------------------------------------------------------------
// Comparison, naming each field.
// ---------------------------------------------------------------------------------------------

export interface FieldProblem {
  field: string;
  problem: 'missing' | 'different' | 'unexpected';
  expected?: unknown;
  got?: unknown;
}

/**
 * Every field of `expected` missing from `got` or different there (deep, key order ignored), and
 * every field of `got` that `expected` lacks, except those listed in `allowed`.
 */
export function petDifferences(expected: PetRecord, got: unknown, allowed: readonly string[] = []): FieldProblem[] {
  if (!isRecord(got)) return [{ field: '(the body)', problem: 'different', expected, got }];
  const problems: FieldProblem[] = [];
  for (const [field, value] of Object.entries(expected)) {
    if (!Object.hasOwn(got, field)) problems.push({ field, problem: 'missing', expected: value });
    else if (!isDeepStrictEqual(got[field], value)) problems.push({ field, problem: 'different', expected: value, got: got[field] });
  }
  for (const [field, value] of Object.entries(got)) {
    if (!Object.hasOwn(expected, field) && !allowed.includes(field)) problems.push({ field, problem: 'unexpected', got: value });
  }
  return problems;
}

/** The fields of `expected` that `got` lacks or holds with another value. */
export function missingFields(expected: PetRecord, got: unknown): string[] {
  return petDifferences(expected, got)
    .filter((p) => p.problem !== 'unexpected')
    .map((p) => p.field);
}

const show = (value: unknown) => (value === undefined ? 'nothing' : JSON.stringify(value));

/** One line per problem: `GET /pets/3: field "nickname" is missing (expected "Nick")` (`where` may be empty). */
export function describeDifferences(where: string, problems: readonly FieldProblem[]): string[] {
  const at = where ? `${where}: ` : '';
  return problems.map((p) => {
    if (p.problem === 'missing') return `${at}field "${p.field}" is missing (expected ${show(p.expected)})`;
    if (p.problem === 'unexpected') return `${at}field "${p.field}" is not expected (got ${show(p.got)})`;
    return `${at}field "${p.field}" is ${show(p.got)}, expected ${show(p.expected)}`;
  });
}

// ---------------------------------------------------------------------------------------------
// The round trip against a running server.
// ---------------------------------------------------------------------------------------------

interface Answer {
  status: number;
  text: string;
  body: unknown;
  link: string | null;
}

async function call(url: string, key: string, method: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method, headers, body: body === undefined ? null : JSON.stringify(body) });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, text, body: parsed, link: response.headers.get('link') };
}

const fillPath = (template: string, values: Record<string, string>) => template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? `{${name}}`));

/** The fields a refusal names (an Error's `details`), each with its message. */
function refusedFields(body: unknown): string[] {
  const details = isRecord(body) && Array.isArray(body.details) ? (body.details as unknown[]) : [];
  return details.filter(isRecord).map((d) => `field "${String(d.field)}" (${String(d.in)}): ${String(d.message)}`);
}

export interface RoundTripOptions {
  /** The body to create (default: `samplePet(document)`). */
  sent?: PetRecord;
  /** Most listPets pages to read while looking for the pet (default 1000). */
  maxPages?: number;
}

/**
 * Creates a pet with every field the spec accepts, then reads it back where the spec says it comes
 * back: the 201 body, getPet and its entry in listPets. Resolves with every problem, one line
 * each, naming the field (empty when the round trip is whole). `apiBase` includes the base path
 * (`http://127.0.0.1:8080/v1`); `document` is the contract the server is meant to implement.
 */
export async function checkRoundTrip(apiBase: string, key: string, document: Json = loadDocument(), options: RoundTripOptions = {}): Promise<string[]> {
  const contract = petContract(document);
  const base = apiBase.replace(/\/$/, '');
  const origin = new URL(base).origin;
  const sent = options.sent ?? samplePet(document);
  const assigned = serverAssignedFields(document);
  const problems: string[] = [];

  // createPet: the 201 body.
  const createWhere = `${contract.createPet.method} ${contract.createPet.path}`;
  const created = await call(base + contract.createPet.path, key, contract.createPet.method, sent);
  if (created.status !== contract.createPet.status) {
    // A field the spec accepts but the server refuses is lost data: the refusal's details name it (or
    // its text is quoted). No sample body here: a line names a field only when the server's answer does.
    const named = refusedFields(created.body).map((f) => `${createWhere} refused the sample pet with ${created.status}: ${f}`);
    const lines = named.length > 0 ? named : [`${createWhere} answered ${created.status}, not ${contract.createPet.status}, to the sample pet: ${created.text.slice(0, 500)}`];
    return lines;
  }
  const pet = created.body;
  const id = isRecord(pet) ? pet.id : undefined;
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) return [`${createWhere}: the ${created.status} body has no integer id: ${created.text.slice(0, 500)}`];
  const expected = expectedPet(id, sent, document);
  const where201 = `${createWhere} → ${created.status}`;
  problems.push(...describeDifferences(where201, petDifferences(expected, pet, assigned)));
  problems.push(...schemaErrors(contract.createPet.response, pet).map((e) => `${where201}: the body breaks the response schema: ${e}`));
  for (const field of contract.response.required) if (isRecord(pet) && !Object.hasOwn(pet, field) && !Object.hasOwn(expected, field)) problems.push(`${where201}: required field "${field}" is missing`);

  // What a read must answer: the prediction, plus the server-assigned fields as the 201 gave them.
  const stored: PetRecord = { ...expected };
  for (const field of assigned) if (isRecord(pet) && Object.hasOwn(pet, field)) stored[field] = pet[field];
  const readOrder = Object.keys(contract.response.properties).filter((f) => f in stored);
  const reread: PetRecord = Object.fromEntries(readOrder.map((f) => [f, stored[f]]));

  // getPet.
  const getPath = fillPath(contract.getPet.path, { [contract.getPet.parameter]: String(id) });
  const getWhere = `${contract.getPet.method} ${getPath}`;
  const fetched = await call(base + getPath, key, contract.getPet.method);
  if (fetched.status !== contract.getPet.status) problems.push(`${getWhere} answered ${fetched.status}, not ${contract.getPet.status}: ${fetched.text.slice(0, 300)}`);
  else {
    problems.push(...describeDifferences(getWhere, petDifferences(reread, fetched.body)));
    problems.push(...schemaErrors(contract.getPet.response, fetched.body).map((e) => `${getWhere}: the body breaks the response schema: ${e}`));
  }

  // listPets: its entry, found by following the Link chain (results are ordered by id).
  const maxPages = options.maxPages ?? 1000;
  const pageSize = contract.listPets.pageSize;
  let url: string | undefined = base + contract.listPets.path + (pageSize ? `?${pageSize.name}=${pageSize.max}` : '');
  let entry: unknown;
  for (let page = 0; url !== undefined && entry === undefined; page++) {
    const listWhere = `${contract.listPets.method} ${url.startsWith(base) ? url.slice(base.length) : url}`;
    if (page >= maxPages) {
      problems.push(`${contract.listPets.method} ${contract.listPets.path}: pet ${id} not found in ${maxPages} pages`);
      break;
    }
    const listed = await call(url, key, contract.listPets.method);
    if (listed.status !== contract.listPets.status || !Array.isArray(listed.body)) {
      problems.push(`${listWhere} answered ${listed.status}: ${listed.text.slice(0, 300)}`);
      break;
    }
    const pets = listed.body as unknown[];
    entry = pets.find((p) => isRecord(p) && p.id === id);
    if (entry !== undefined) {
      problems.push(...describeDifferences(`${listWhere} (pet ${id})`, petDifferences(reread, entry)));
      problems.push(...schemaErrors(contract.listPets.item, entry).map((e) => `${listWhere}: pet ${id} breaks the item schema: ${e}`));
    }
    const passed = pets.some((p) => isRecord(p) && typeof p.id === 'number' && p.id > id);
    const next = nextLink(listed.link);
    url = entry === undefined && !passed && next !== undefined ? new URL(next, origin).toString() : undefined;
    if (entry === undefined && url === undefined) problems.push(`${contract.listPets.method} ${contract.listPets.path}: pet ${id} is not listed`);
  }
  return problems;
}
