/**
 * The contract as the fuzzer reads it: generated/openapi.json, loaded at test time, with `$ref`s
 * resolved by the tests' one resolver (test/support/dereference.ts) on a copy. Everything the generators and checks know about an operation (its method and path,
 * parameters, body schema, declared statuses and headers, the body limit) comes from here, so a
 * change to the spec changes what is fuzzed and what is expected without touching the tests.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { dereferenceDocument } from '../../../support/dereference.js';

/** The JSON-Schema subset the spec uses (OpenAPI 3.1 = JSON Schema 2020-12), `$ref`s resolved. */
export interface JsonSchema {
  type?: string;
  format?: string;
  enum?: readonly unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  required?: readonly string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  unevaluatedProperties?: boolean;
  allOf?: readonly JsonSchema[];
  default?: unknown;
  items?: JsonSchema;
  maxItems?: number;
  description?: string;
}

export interface ParameterSpec {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required: boolean;
  schema: JsonSchema;
  description?: string;
  /** Its `example` and `examples` values, as text: what the spec shows a caller sends (a `Range`'s `bytes=0-1023`). */
  examples: string[];
}

export interface HeaderSpec {
  required: boolean;
  schema: JsonSchema;
}

export interface ResponseSpec {
  description: string;
  headers: Record<string, HeaderSpec>;
  /** The `application/json` schema, when the response has a body. */
  schema: JsonSchema | undefined;
  /** Every media type the response declares (JSON, XML, Problem Details, images). */
  mediaTypes: string[];
}

export interface OperationSpec {
  operationId: string;
  method: string;
  /** As the spec writes it, relative to the base path: `/pets/{petId}`. */
  path: string;
  parameters: ParameterSpec[];
  /** Media types of the request body and the schema of `application/json`, if there is a body. */
  /**
   * `mediaTypes`: the JSON ones (`application/json`, `+json`), whose bodies are fuzzed against
   * `schema` (application/json's, else the first JSON type's); `otherMediaTypes`: the rest it declares (a form, multipart,
   * bytes), never sent a JSON body as if it were theirs. `exampleFiles`: per media type, the bytes
   * of the examples that name a file of spec/ (`x-example-file`: a photo to send), so a fuzzer can
   * send what the operation stores, not only bytes it refuses.
   */
  requestBody: { required: boolean; mediaTypes: string[]; otherMediaTypes: string[]; schema: JsonSchema | undefined; exampleFiles: Record<string, Buffer[]> } | undefined;
  /** By status code (`'200'`) or `'default'`. */
  responses: Record<string, ResponseSpec>;
}

export interface ContractSpec {
  /** The contract as written (`$ref`s in place), for readers that resolve it themselves. */
  document: Record<string, unknown>;
  /** `/v1`, from the first server URL. */
  basePath: string;
  operations: Record<string, OperationSpec>;
  /** The methods the spec declares for each path (upper case), for 405 `Allow` checks. */
  methodsByPath: Record<string, string[]>;
  /** Flattens `allOf` (the schemas here have no `$ref` left). */
  resolve(schema: JsonSchema): JsonSchema;
  /** The schema a `#/components/...` pointer names, as written (`$ref`s resolved, `allOf` kept): for validators. */
  schemaAt(pointer: string): JsonSchema;
  /** The same, flattened: for generators and the facts read from descriptions. */
  component(pointer: string): JsonSchema;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An OpenAPI object (path item, parameter, response, header) of the dereferenced document. */
function object(value: unknown, what: string): Record<string, unknown> {
  if (!isRecord(value)) throw new Error(`${what}: expected an object`);
  return value;
}

/**
 * One schema from an `allOf` combination. allOf is an intersection; for the keywords this spec
 * uses, that means: the tighter bound wins, `required` lists add up, `properties` merge, enums
 * intersect. The outer schema's own keywords (`default`, `description`) are kept.
 */
function flatten(schema: JsonSchema): JsonSchema {
  const own: JsonSchema = { ...schema };
  delete own.allOf;
  let merged = mergeSchemas({}, own);
  for (const part of schema.allOf ?? []) merged = mergeSchemas(merged, flatten(part));
  return merged;
}

function mergeSchemas(a: JsonSchema, b: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...a, ...b };
  if (a.minimum !== undefined && b.minimum !== undefined) out.minimum = Math.max(a.minimum, b.minimum);
  if (a.maximum !== undefined && b.maximum !== undefined) out.maximum = Math.min(a.maximum, b.maximum);
  if (a.minLength !== undefined && b.minLength !== undefined) out.minLength = Math.max(a.minLength, b.minLength);
  if (a.maxLength !== undefined && b.maxLength !== undefined) out.maxLength = Math.min(a.maxLength, b.maxLength);
  if (a.required || b.required) out.required = [...new Set([...(a.required ?? []), ...(b.required ?? [])])];
  if (a.properties || b.properties) out.properties = { ...a.properties, ...b.properties };
  if (a.enum && b.enum) out.enum = a.enum.filter((v) => b.enum?.includes(v));
  // The outer schema's default and description describe the merged field, not a part of it.
  if (a.default !== undefined) out.default = a.default;
  if (a.description !== undefined) out.description = a.description;
  return out;
}

function responseSpec(raw: unknown, what: string): ResponseSpec {
  const response = object(raw, what);
  const headers: Record<string, HeaderSpec> = {};
  for (const [name, header] of Object.entries(isRecord(response.headers) ? response.headers : {})) {
    const h = object(header, `${what} header ${name}`);
    headers[name] = { required: h.required === true, schema: flatten((h.schema ?? {}) as JsonSchema) };
  }
  const content = isRecord(response.content) ? response.content : {};
  const json = isRecord(content['application/json']) ? content['application/json'] : undefined;
  return {
    description: typeof response.description === 'string' ? response.description : '',
    headers,
    schema: json && isRecord(json.schema) ? (json.schema as JsonSchema) : undefined,
    mediaTypes: Object.keys(content),
  };
}

/** Reads and indexes the bundled contract. */
/** Each media type's examples that name a file (`x-example-file`, relative to spec/), read. */
function exampleFilesOf(content: Record<string, unknown>, specDir: string): Record<string, Buffer[]> {
  const files: Record<string, Buffer[]> = {};
  for (const [mediaType, media] of Object.entries(content)) {
    const examples = isRecord(media) && isRecord(media.examples) ? Object.values(media.examples) : [];
    const named = examples.flatMap((example) => (isRecord(example) && typeof example['x-example-file'] === 'string' ? [example['x-example-file']] : []));
    if (named.length > 0) files[mediaType] = named.map((file) => readFileSync(join(specDir, file)));
  }
  return files;
}

/** `specDir`: where the contract's `x-example-file` names are read from (spec/, beside generated/). */
export async function loadContract(path = join(process.cwd(), 'generated', 'openapi.json'), specDir = join(dirname(path), '..', 'spec')): Promise<ContractSpec> {
  const document = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  const dereferenced = await dereferenceDocument(document);
  const resolved = dereferenced.document;
  const servers = document.servers as Array<{ url: string }> | undefined;
  const firstServer = servers?.[0]?.url;
  if (!firstServer) throw new Error('the spec declares no server');
  const basePath = new URL(firstServer).pathname.replace(/\/$/, '');

  const operations: Record<string, OperationSpec> = {};
  const methodsByPath: Record<string, string[]> = {};
  for (const [path, rawItem] of Object.entries((resolved.paths ?? {}) as Record<string, unknown>)) {
    const item = object(rawItem, `path ${path}`);
    methodsByPath[path] = [];
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!isRecord(op) || typeof op.operationId !== 'string') continue;
      methodsByPath[path].push(method.toUpperCase());
      // HEAD wherever GET is: the server answers it as the GET without a body (RFC 9110 §9.3.2).
      if (method === 'get' && !isRecord(item.head)) methodsByPath[path].push('HEAD');
      const parameters = [...(Array.isArray(item.parameters) ? item.parameters : []), ...(Array.isArray(op.parameters) ? op.parameters : [])].map((p): ParameterSpec => {
        const param = object(p, `${String(op.operationId)} parameter`);
        const shown = [...('example' in param ? [param.example] : []), ...Object.values(isRecord(param.examples) ? param.examples : {}).map((e) => (isRecord(e) ? e.value : undefined))];
        const spec: ParameterSpec = {
          name: String(param.name),
          in: param.in as ParameterSpec['in'],
          required: param.required === true,
          schema: flatten((param.schema ?? {}) as JsonSchema),
          examples: shown.flatMap((value) => (value === undefined ? [] : [typeof value === 'string' ? value : JSON.stringify(value)])),
        };
        if (typeof param.description === 'string') spec.description = param.description;
        return spec;
      });
      let requestBody: OperationSpec['requestBody'];
      if (op.requestBody !== undefined) {
        const body = object(op.requestBody, `${op.operationId} requestBody`);
        const content = isRecord(body.content) ? body.content : {};
        const isJson = (type: string) => type === 'application/json' || type.endsWith('+json');
        // application/json's schema, else the first JSON type's (a merge patch's).
        const json = content['application/json'] ?? content[Object.keys(content).find(isJson) ?? ''];
        requestBody = {
          required: body.required === true,
          mediaTypes: Object.keys(content).filter(isJson),
          otherMediaTypes: Object.keys(content).filter((type) => !isJson(type)),
          schema: isRecord(json) && isRecord(json.schema) ? (json.schema as JsonSchema) : undefined,
          exampleFiles: exampleFilesOf(content, specDir),
        };
      }
      const responses: Record<string, ResponseSpec> = {};
      for (const [status, raw] of Object.entries(isRecord(op.responses) ? op.responses : {})) responses[status] = responseSpec(raw, `${op.operationId} ${status}`);
      operations[op.operationId] = { operationId: op.operationId, method: method.toUpperCase(), path, parameters, requestBody, responses };
    }
  }

  return {
    document,
    basePath,
    operations,
    methodsByPath,
    resolve: flatten,
    schemaAt: (pointer) => object(dereferenced.at(pointer), pointer) as JsonSchema,
    component: (pointer) => flatten(object(dereferenced.at(pointer), pointer) as JsonSchema),
  };
}

export function operation(contract: ContractSpec, operationId: string): OperationSpec {
  const op = contract.operations[operationId];
  if (!op) throw new Error(`the spec has no operation ${operationId}`);
  return op;
}

export function parameter(op: OperationSpec, name: string): ParameterSpec {
  const param = op.parameters.find((p) => p.name === name);
  if (!param) throw new Error(`${op.operationId} has no parameter ${name}`);
  return param;
}

/**
 * The statuses an operation may answer. Numeric keys are declared outright. The `default`
 * response is documented, in its description, as covering a closed list of statuses ("Any other
 * error: 405 …, 501 … or 503 …"); those numbers are read from the text, so `default` does not
 * silently bless every status. A `default` whose description names no status covers any 4xx/5xx.
 */
export function declaredStatuses(op: OperationSpec): { explicit: number[]; viaDefault: number[] | 'any-error' } {
  const explicit = Object.keys(op.responses)
    .filter((k) => /^\d{3}$/.test(k))
    .map(Number);
  const fallback = op.responses.default;
  if (!fallback) return { explicit, viaDefault: [] };
  const named = [...fallback.description.matchAll(/\b([45]\d\d)\b/g)].map((m) => Number(m[1]));
  return { explicit, viaDefault: named.length > 0 ? [...new Set(named)] : 'any-error' };
}

export function isDeclaredStatus(op: OperationSpec, status: number): boolean {
  const { explicit, viaDefault } = declaredStatuses(op);
  if (explicit.includes(status)) return true;
  return viaDefault === 'any-error' ? status >= 400 && status <= 599 : viaDefault.includes(status);
}

/** The response object that describes `status` for `op` (its own entry, else `default`). */
export function responseFor(op: OperationSpec, status: number): ResponseSpec | undefined {
  return op.responses[String(status)] ?? op.responses.default;
}

/**
 * Which HTTP statuses each `ErrorCode` goes with. The spec states it in the ErrorCode description,
 * one line per code: "- `validation_failed` (400): …", or "(413, 431)" for a code with several.
 */
export function errorCodeStatuses(contract: ContractSpec): Map<string, number[]> {
  const errorCode = contract.component('#/components/schemas/ErrorCode');
  const map = new Map<string, number[]>();
  for (const m of (errorCode.description ?? '').matchAll(/^\s*-\s*`([a-z_]+)`\s*\(([\d,\s]+)\)/gm)) {
    map.set(String(m[1]), String(m[2]).split(',').map((n) => Number(n.trim())));
  }
  for (const code of errorCode.enum ?? []) if (!map.has(String(code))) throw new Error(`ErrorCode ${String(code)} has no status in its description`);
  return map;
}

/**
 * The largest request body the service accepts, in bytes. The spec states it in the description
 * of the operation's 413 response ("larger than 64 KiB").
 */
export function bodyLimitBytes(op: OperationSpec): number {
  const text = op.responses['413']?.description ?? '';
  const m = /(\d+)\s*(KiB|MiB|bytes)/.exec(text);
  if (!m) throw new Error(`${op.operationId}: the 413 response does not state the body limit`);
  const n = Number(m[1]);
  return m[2] === 'KiB' ? n * 1024 : m[2] === 'MiB' ? n * 1024 * 1024 : n;
}
