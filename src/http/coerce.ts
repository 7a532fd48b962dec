/**
 * Path and query values arrive as text; their schemas want integers, numbers or booleans. Ajv's
 * own coercion takes anything `Number()` takes (`0x10`, `1e1`, `+5`, ` 5`), so a value the spec
 * types as an integer could be written many ways. Here only the canonical decimal form becomes a
 * number; any other text stays text, and the validator then reports it as the wrong type.
 */
import type { Operation } from 'openapi-backend';

type Kind = 'integer' | 'number' | 'boolean' | 'string';
export type Location = 'path' | 'query';

const INTEGER = /^-?(?:0|[1-9][0-9]*)$/;
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

function kindOf(schema: unknown, where: string): Kind {
  const type = (schema as { type?: unknown } | undefined)?.type;
  if (type === 'integer' || type === 'number' || type === 'boolean' || type === 'string') return type;
  throw new Error(`${where}: only integer, number, boolean and string parameters are supported (got ${JSON.stringify(type)})`);
}

function convert(kind: Kind, text: string): unknown {
  switch (kind) {
    case 'integer':
      return INTEGER.test(text) ? Number(text) : text;
    case 'number':
      return NUMBER.test(text) ? Number(text) : text;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    default:
      return text;
  }
}

/** Compiled once per operation: converts the values of `values` in place. */
export function compileCoercion(operation: Pick<Operation, 'operationId' | 'parameters'>): (where: Location, values: Record<string, unknown>) => void {
  const kinds: Record<Location, Map<string, Kind>> = { path: new Map(), query: new Map() };
  for (const parameter of operation.parameters ?? []) {
    if (!('in' in parameter)) continue;
    if (parameter.in !== 'path' && parameter.in !== 'query') continue;
    kinds[parameter.in].set(parameter.name, kindOf(parameter.schema, `${operation.operationId ?? '?'} ${parameter.in} parameter ${parameter.name}`));
  }
  return (where, values) => {
    for (const [name, kind] of kinds[where]) {
      const value = values[name];
      // A repeated query parameter stays an array: the validator rejects it for a scalar schema.
      if (kind !== 'string' && typeof value === 'string') values[name] = convert(kind, value);
    }
  };
}
