/**
 * Checks one HTTP response against the contract (generated/openapi.json) with its own Ajv
 * 2020-12 + ajv-formats, independently of the server's built-in response checker, so a target
 * (mock, server, proxy) is judged by the spec alone: the status is declared for the operation
 * (or covered by `default`), a declared body is JSON of the declared media type and schema, and
 * every declared header is checked against its schema (required ones must be present).
 *
 * `$ref`s are resolved by the tests' one resolver (test/support/dereference.ts), on a copy of the
 * document: responses, headers and schemas are plain objects here.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { loadBundledSpec, type OpenApiDocument } from '../../src/shared/spec.js';
import { dereferenceDocument } from '../support/dereference.js';

// ajv-formats ships CommonJS whose default export TypeScript sees one level deep.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** The operations the suite calls by name. */
export type OperationId = 'listPets' | 'createPet' | 'getPet' | 'updatePet' | 'deletePet';

export interface ObservedResponse {
  status: number;
  headers: Headers;
  /** The raw body. */
  text: string;
}

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `node[key]` when it is an object. */
function child(node: Json | undefined, key: string): Json | undefined {
  const value = node?.[key];
  return isObject(value) ? value : undefined;
}

export interface Conformance {
  /** What is wrong with `response` as an answer of `operationId`; empty when it conforms. */
  check(operationId: OperationId, response: ObservedResponse): string[];
  /** What is wrong with `value` as an instance of the component schema `name`. */
  schemaProblems(name: string, value: unknown): string[];
  document: OpenApiDocument;
}

/** Checks against `document` (default: the bundled contract), `$ref`s resolved on a copy. */
export async function createConformance(document: OpenApiDocument = loadBundledSpec()): Promise<Conformance> {
  const { document: resolved } = await dereferenceDocument(document as unknown as Json);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= INT32.min && n <= INT32.max });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });

  // Compiled once per schema object: the dereferenced copy shares one object per component.
  const compiled = new WeakMap<Json, ValidateFunction>();
  const validatorFor = (schema: Json): ValidateFunction => {
    let validate = compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(schema);
      compiled.set(schema, validate);
    }
    return validate;
  };
  const problemsOf = (validate: ValidateFunction, value: unknown, what: string): string[] =>
    validate(value) ? [] : (validate.errors ?? []).map((e) => `${what}${e.instancePath} ${e.message ?? 'is invalid'}`);

  const operations = new Map<string, Json>();
  for (const item of Object.values(child(resolved, 'paths') ?? {})) {
    for (const op of Object.values(isObject(item) ? item : {})) {
      if (isObject(op) && typeof op.operationId === 'string') operations.set(op.operationId, op);
    }
  }

  function check(operationId: OperationId, response: ObservedResponse): string[] {
    const operation = operations.get(operationId);
    if (!operation) return [`${operationId} is not in the contract`];
    const responses = child(operation, 'responses');
    const declared = child(responses, String(response.status)) ?? child(responses, 'default');
    if (!declared) return [`status ${response.status} is not declared for ${operationId}`];
    const problems: string[] = [];

    const content = child(declared, 'content');
    if (content) {
      const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      const media = child(content, type);
      const schema = child(media, 'schema');
      if (!media) {
        problems.push(`content type "${type}" is not declared for ${response.status} (declared: ${Object.keys(content).join(', ')})`);
      } else if (schema) {
        let body: unknown;
        try {
          body = JSON.parse(response.text);
        } catch {
          problems.push(`body is not JSON: ${response.text.slice(0, 120)}`);
        }
        if (body !== undefined) problems.push(...problemsOf(validatorFor(schema), body, 'body'));
      }
    }

    for (const [name, header] of Object.entries(child(declared, 'headers') ?? {})) {
      if (!isObject(header)) continue;
      const value = response.headers.get(name);
      if (value === null) {
        if (header.required === true) problems.push(`required header ${name} is missing`);
        continue;
      }
      const schema = child(header, 'schema');
      if (schema) problems.push(...problemsOf(validatorFor(schema), value, `header ${name}`));
    }
    return problems;
  }

  function schemaProblems(name: string, value: unknown): string[] {
    const schema = child(child(child(resolved, 'components'), 'schemas'), name);
    if (!schema) return [`the contract has no schema ${name}`];
    return problemsOf(validatorFor(schema), value, name);
  }

  return { check, schemaProblems, document };
}
