/**
 * Strict numbers in parameters. Path, query, header and cookie values arrive as text, and Ajv's
 * `coerceTypes` turns text into a number whenever `text == +text` holds: `0x10`, `1e1`, `+5`,
 * ` 5`, `01` and `1.0` would all pass as integers. So one Ajv keyword runs on openapi-backend's
 * parameter object before `properties` (where Ajv coerces) and refuses any text that a schema
 * types as a number but that is not written in plain decimal; Ajv then coerces only what passed.
 * Ajv has no option for this, and openapi-backend leaves coercion to Ajv.
 */
import type { Ajv2020, ErrorObject } from 'ajv/dist/2020.js';

export const CANONICAL_NUMERALS = 'x-canonical-numerals';

const INTEGER = /^-?(?:0|[1-9][0-9]*)$/;
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const LOCATIONS = ['path', 'query', 'header', 'cookie'] as const;
type Resolve = (schema: Schema | undefined) => Schema | undefined;

type Schema = {
  $ref?: unknown;
  type?: unknown;
  items?: unknown;
  properties?: Record<string, unknown>;
  allOf?: unknown[];
};

function asSchema(value: unknown): Schema | undefined {
  return typeof value === 'object' && value !== null ? (value as Schema) : undefined;
}

/**
 * openapi-backend compiles its parameter schema through a `decycle` that replaces every repeated
 * object (a schema two parameters share) by a local `$ref`: follow those pointers from the root.
 */
function resolver(root: Schema): (schema: Schema | undefined) => Schema | undefined {
  return function resolve(schema) {
    if (typeof schema?.$ref !== 'string' || !schema.$ref.startsWith('#')) return schema;
    let target: unknown = root;
    for (const segment of schema.$ref.slice(2).split('/')) {
      if (segment === '') continue;
      target = asSchema(target)?.[decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~') as keyof Schema];
    }
    return resolve(asSchema(target));
  };
}

/** 'integer', 'number' or undefined: what a string value of this schema must spell. */
function numericType(schema: Schema, resolve: Resolve): 'integer' | 'number' | undefined {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('string')) return undefined;
  if (types.includes('integer')) return 'integer';
  if (types.includes('number')) return 'number';
  for (const part of schema.allOf ?? []) {
    const inner = resolve(asSchema(part));
    const found = inner && numericType(inner, resolve);
    if (found) return found;
  }
  return undefined;
}

function pointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Collects an error for each value under `path` that is non-canonical text for a numeric schema. */
function check(value: unknown, given: Schema | undefined, path: string, errors: ErrorObject[], resolve: Resolve): void {
  const schema = resolve(given);
  if (!schema) return;
  if (typeof value === 'string') {
    const type = numericType(schema, resolve);
    if (type && !(type === 'integer' ? INTEGER : NUMBER).test(value)) {
      errors.push({ keyword: 'type', instancePath: path, schemaPath: `#/${CANONICAL_NUMERALS}`, params: { type }, message: `must be ${type}` });
    }
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => check(item, asSchema(schema.items), `${path}/${i}`, errors, resolve));
  } else if (typeof value === 'object' && value !== null) {
    for (const [name, item] of Object.entries(value)) check(item, asSchema(schema.properties?.[name]), `${path}/${pointer(name)}`, errors, resolve);
  }
}

/**
 * Adds the keyword to `ajv`, and makes every schema it compiles carry it at the root: the
 * parameter schemas openapi-backend builds have `path`, `query`, `header` and `cookie` there.
 */
export function useCanonicalNumerals(ajv: Ajv2020): void {
  const validate = (_enabled: unknown, data: unknown, parentSchema?: unknown): boolean => {
    const errors: ErrorObject[] = [];
    const root = asSchema(parentSchema);
    if (!root) return true;
    const resolve = resolver(root);
    const values = data as Record<string, unknown>;
    for (const location of LOCATIONS) {
      const container = resolve(asSchema(root.properties?.[location]));
      const given = values[location];
      if (!container?.properties || typeof given !== 'object' || given === null) continue;
      for (const [name, schema] of Object.entries(container.properties)) {
        if (name in given) check((given as Record<string, unknown>)[name], asSchema(schema), `/${location}/${pointer(name)}`, errors, resolve);
      }
    }
    validate.errors = errors;
    return errors.length === 0;
  };
  validate.errors = [] as ErrorObject[];
  ajv.addKeyword({ keyword: CANONICAL_NUMERALS, type: 'object', before: 'properties', errors: true, validate });
  const compile = ajv.compile.bind(ajv);
  ajv.compile = ((schema: object, meta?: boolean) => compile({ ...schema, [CANONICAL_NUMERALS]: true }, meta)) as typeof ajv.compile;
}
