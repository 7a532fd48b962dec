/**
 * Checks one HTTP response against the contract (generated/openapi.json) with its own Ajv
 * 2020-12 + ajv-formats, independently of the server's built-in response checker, so a target
 * (mock, server, proxy) is judged by the spec alone: the status is declared for the operation
 * (or covered by `default`), a declared body is JSON of the declared media type and schema, and
 * every declared header is checked against its schema (required ones must be present).
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { loadBundledSpec, type OpenApiDocument } from '../../src/spec.js';

// ajv-formats ships CommonJS whose default export TypeScript sees one level deep.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export type OperationId = 'listPets' | 'createPet' | 'getPet';

export interface ObservedResponse {
  status: number;
  headers: Headers;
  /** The raw body. */
  text: string;
}

const SPEC_ID = 'openapi.json';
const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Decodes one JSON Pointer token (RFC 6901). */
const unescape = (token: string) => token.replace(/~1/g, '/').replace(/~0/g, '~');
const escape = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');

/** A node of the document with the JSON Pointer where it lives, following local `$ref`s. */
interface Located {
  node: Json;
  pointer: string;
}

function at(document: OpenApiDocument, pointer: string): unknown {
  let current: unknown = document;
  for (const token of pointer.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    if (!isObject(current)) return undefined;
    current = current[unescape(token)];
  }
  return current;
}

function resolve(document: OpenApiDocument, located: Located): Located {
  let { node, pointer } = located;
  for (let hops = 0; typeof node.$ref === 'string'; hops++) {
    if (hops > 10 || !node.$ref.startsWith('#/')) throw new Error(`cannot follow $ref ${node.$ref} at ${pointer}`);
    pointer = node.$ref;
    const target = at(document, pointer);
    if (!isObject(target)) throw new Error(`$ref ${pointer} points at nothing`);
    node = target;
  }
  return { node, pointer };
}

function child(located: Located, key: string): Located | undefined {
  const value = located.node[key];
  return isObject(value) ? { node: value, pointer: `${located.pointer}/${escape(key)}` } : undefined;
}

export interface Conformance {
  /** What is wrong with `response` as an answer of `operationId`; empty when it conforms. */
  check(operationId: OperationId, response: ObservedResponse): string[];
  /** What is wrong with `value` as an instance of the component schema `name`. */
  schemaProblems(name: string, value: unknown): string[];
  document: OpenApiDocument;
}

export function createConformance(document: OpenApiDocument = loadBundledSpec()): Conformance {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= INT32.min && n <= INT32.max });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  // The whole document is one schema resource, so `#/components/...` refs inside it resolve.
  ajv.addSchema(document as unknown as Json, SPEC_ID);

  const compiled = new Map<string, ValidateFunction>();
  const validatorAt = (pointer: string): ValidateFunction => {
    let validate = compiled.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `${SPEC_ID}${pointer}` });
      compiled.set(pointer, validate);
    }
    return validate;
  };
  const problemsOf = (validate: ValidateFunction, value: unknown, what: string): string[] =>
    validate(value) ? [] : (validate.errors ?? []).map((e) => `${what}${e.instancePath} ${e.message ?? 'is invalid'}`);

  const operations = new Map<string, Located>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, op] of Object.entries(item ?? {})) {
      if (isObject(op) && typeof op.operationId === 'string') {
        operations.set(op.operationId, { node: op, pointer: `#/paths/${escape(path)}/${method}` });
      }
    }
  }

  function check(operationId: OperationId, response: ObservedResponse): string[] {
    const operation = operations.get(operationId);
    if (!operation) return [`${operationId} is not in the contract`];
    const responses = child(operation, 'responses');
    const declared = responses && (child(responses, String(response.status)) ?? child(responses, 'default'));
    if (!declared) return [`status ${response.status} is not declared for ${operationId}`];
    const resolved = resolve(document, declared);
    const problems: string[] = [];

    const content = child(resolved, 'content');
    if (content) {
      const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      const media = child(content, type);
      const schema = media && child(media, 'schema');
      if (!media) {
        problems.push(`content type "${type}" is not declared for ${response.status} (declared: ${Object.keys(content.node).join(', ')})`);
      } else if (schema) {
        let body: unknown;
        try {
          body = JSON.parse(response.text);
        } catch {
          problems.push(`body is not JSON: ${response.text.slice(0, 120)}`);
        }
        if (body !== undefined) problems.push(...problemsOf(validatorAt(schema.pointer), body, 'body'));
      }
    }

    const headers = child(resolved, 'headers');
    for (const name of Object.keys(headers?.node ?? {})) {
      const header = headers && child(headers, name);
      if (!header) continue;
      const spec = resolve(document, header);
      const value = response.headers.get(name);
      if (value === null) {
        if (spec.node.required === true) problems.push(`required header ${name} is missing`);
        continue;
      }
      const schema = child(spec, 'schema');
      if (schema) problems.push(...problemsOf(validatorAt(schema.pointer), value, `header ${name}`));
    }
    return problems;
  }

  function schemaProblems(name: string, value: unknown): string[] {
    return problemsOf(validatorAt(`#/components/schemas/${escape(name)}`), value, name);
  }

  return { check, schemaProblems, document };
}
