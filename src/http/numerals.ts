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

type Schema = {
  type?: unknown;
  items?: unknown;
  properties?: Record<string, unknown>;
  allOf?: unknown[];
};

function asSchema(value: unknown): Schema | undefined {
  return typeof value === 'object' && value !== null ? (value as Schema) : undefined;
}

/** 'integer', 'number' or undefined: what a string value of this schema must spell. */
function numericType(schema: Schema): 'integer' | 'number' | undefined {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('string')) return undefined;
  if (types.includes('integer')) return 'integer';
  if (types.includes('number')) return 'number';
  for (const part of schema.allOf ?? []) {
    const inner = asSchema(part);
    const found = inner && numericType(inner);
    if (found) return found;
  }
  return undefined;
}

function pointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Collects an error for each value under `path` that is non-canonical text for a numeric schema. */
function check(value: unknown, schema: Schema | undefined, path: string, errors: ErrorObject[]): void {
  if (!schema) return;
  if (typeof value === 'string') {
    const type = numericType(schema);
    if (type && !(type === 'integer' ? INTEGER : NUMBER).test(value)) {
      errors.push({ keyword: 'type', instancePath: path, schemaPath: `#/${CANONICAL_NUMERALS}`, params: { type }, message: `must be ${type}` });
    }
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => check(item, asSchema(schema.items), `${path}/${i}`, errors));
  } else if (typeof value === 'object' && value !== null) {
    for (const [name, item] of Object.entries(value)) check(item, asSchema(schema.properties?.[name]), `${path}/${pointer(name)}`, errors);
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
    const values = data as Record<string, unknown>;
    for (const location of LOCATIONS) {
      const container = asSchema(root?.properties?.[location]);
      const given = values[location];
      if (!container?.properties || typeof given !== 'object' || given === null) continue;
      for (const [name, schema] of Object.entries(container.properties)) {
        if (name in given) check((given as Record<string, unknown>)[name], asSchema(schema), `/${location}/${pointer(name)}`, errors);
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
