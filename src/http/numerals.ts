/**
 * Strict numbers in parameters. Path, query, header and cookie values arrive as text, and Ajv's
 * `coerceTypes` turns text into a number whenever `text == +text` holds: `0x10`, `1e1`, `+5`,
 * ` 5`, `01` and `1.0` would all pass as integers. So one Ajv keyword runs on openapi-backend's
 * parameter object before `properties` (where Ajv coerces) and refuses any text that a schema
 * types as a number but that is not written in plain decimal; Ajv then coerces only what passed.
 * Ajv has no option for this, and openapi-backend leaves coercion to Ajv.
 */
import type { Ajv2020, ErrorObject } from 'ajv/dist/2020.js';
import { followLocalRef } from '../shared/spec.js';

export const CANONICAL_NUMERALS = 'x-canonical-numerals';

const PATTERNS = {
  integer: /^-?(?:0|[1-9][0-9]*)$/,
  number: /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/,
};
// requestBody: a form's or a multipart body's text fields (./openapiBackend.ts, bodyCheck).
const LOCATIONS = ['path', 'query', 'header', 'cookie', 'requestBody'] as const;

type Schema = {
  $ref?: unknown;
  type?: unknown;
  items?: unknown;
  properties?: Record<string, unknown>;
  allOf?: unknown[];
};
type Resolve = (schema: unknown) => Schema | undefined;
/** Checks one value (at JSON pointer `path`) against what was compiled from its schema. */
type Check = (value: unknown, path: string, errors: ErrorObject[]) => void;

function asSchema(value: unknown): Schema | undefined {
  return typeof value === 'object' && value !== null ? (value as Schema) : undefined;
}

function pointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * openapi-backend compiles its parameter schema through a `decycle` that replaces every repeated
 * object (a schema two parameters share) by a local `$ref`: follow those pointers from the root.
 */
function resolver(root: Schema): Resolve {
  return (value) => asSchema(followLocalRef(root, value));
}

/** 'integer', 'number' or undefined: what a string value of this schema must spell. */
function numericType(schema: Schema, resolve: Resolve): 'integer' | 'number' | undefined {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('string')) return undefined;
  if (types.includes('integer')) return 'integer';
  if (types.includes('number')) return 'number';
  for (const part of schema.allOf ?? []) {
    const inner = resolve(part);
    const found = inner && numericType(inner, resolve);
    if (found) return found;
  }
  return undefined;
}

/** A check for values of `given`, or undefined when nothing in it can be a number. */
function compileCheck(given: unknown, resolve: Resolve, depth = 0): Check | undefined {
  const schema = resolve(given);
  // Parameters are flat (npm run lint says so); the bound only stops a recursive schema.
  if (!schema || depth > 8) return undefined;
  const type = numericType(schema, resolve);
  const items = schema.items === undefined ? undefined : compileCheck(schema.items, resolve, depth + 1);
  // Each property with its JSON pointer segment, escaped once here rather than on every request.
  const properties = new Map<string, [segment: string, check: Check]>();
  for (const [name, sub] of Object.entries(schema.properties ?? {})) {
    const check = compileCheck(sub, resolve, depth + 1);
    if (check) properties.set(name, [`/${pointer(name)}`, check]);
  }
  if (!type && !items && properties.size === 0) return undefined;
  return (value, path, errors) => {
    if (typeof value === 'string') {
      if (type && !PATTERNS[type].test(value)) {
        errors.push({ keyword: 'type', instancePath: path, schemaPath: `#/${CANONICAL_NUMERALS}`, params: { type }, message: `must be ${type}` });
      }
    } else if (Array.isArray(value)) {
      if (items) value.forEach((item, i) => items(item, `${path}/${i}`, errors));
    } else if (typeof value === 'object' && value !== null) {
      for (const [name, [segment, check]] of properties) {
        if (name in value) check((value as Record<string, unknown>)[name], path + segment, errors);
      }
    }
  };
}

/**
 * Adds the keyword to `ajv`, and makes every schema it compiles carry it at the root: the
 * parameter schemas openapi-backend builds have `path`, `query`, `header` and `cookie` there.
 * What to check is worked out once per schema; a request pays one test per numeric value.
 */
export function useCanonicalNumerals(ajv: Ajv2020): void {
  ajv.addKeyword({
    keyword: CANONICAL_NUMERALS,
    type: 'object',
    before: 'properties',
    errors: true,
    compile(_enabled: unknown, parentSchema: object) {
      const root = parentSchema as Schema;
      const resolve = resolver(root);
      const checks: Array<[location: string, path: string, check: Check]> = [];
      for (const location of LOCATIONS) {
        const check = compileCheck(root.properties?.[location], resolve);
        if (check) checks.push([location, `/${location}`, check]);
      }
      const validate = (data: Record<string, unknown>): boolean => {
        const errors: ErrorObject[] = [];
        for (const [location, path, check] of checks) check(data[location], path, errors);
        validate.errors = errors;
        return errors.length === 0;
      };
      validate.errors = [] as ErrorObject[];
      return validate;
    },
  });
  const compile = ajv.compile.bind(ajv);
  ajv.compile = ((schema: object, meta?: boolean) => compile({ ...schema, [CANONICAL_NUMERALS]: true }, meta)) as typeof ajv.compile;
}
