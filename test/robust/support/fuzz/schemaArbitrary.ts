/**
 * Schema → arbitrary, for the JSON-Schema subset the spec uses: type (integer, string, object,
 * array), enum, minimum/maximum, minLength/maxLength (in code points, as JSON Schema and Ajv
 * count), pattern, required, additionalProperties/unevaluatedProperties false, allOf (flattened
 * by the contract, whose `$ref`s are resolved when it is loaded), default (an optional field with a default may be left out).
 *
 * `validValue` draws values the schema accepts, biased to its edges (bounds, both length limits,
 * every enum value). `invalidValue` draws values it refuses, each with the field at fault, so a
 * check can insist that the 400 names that field.
 */
import fc from 'fast-check';
import { JsonObject, RawNumber, type JsonValue } from './jsonText.js';
import type { ContractSpec, JsonSchema } from './spec.js';
import { anyCodePoint, codePointLength, hostileCodePoint } from './unicode.js';

/** Upper bounds where the schema gives none, to keep generated values small. */
const DEFAULT_MAX_LENGTH = 32;
const DEFAULT_MAX_ITEMS = 4;

/** A value the schema refuses, and which field is at fault (dot path; '' for the whole value). */
export interface Violation {
  value: JsonValue;
  field: string;
  reason: string;
}

function patternRegExp(pattern: string): RegExp {
  // JSON Schema patterns are ECMA-262 with Unicode semantics (\p{…} needs the u flag).
  return new RegExp(pattern, 'u');
}

/**
 * A pattern of the form `^[class]*$` or `^[class]+$` constrains each character alone; the
 * character is then drawn from `[class]` directly instead of filtering whole strings (a filter
 * would almost never hit a narrow class like `[A-Za-z0-9_.-]`).
 */
function singleClass(pattern: string): RegExp | undefined {
  const m = /^\^(\[(?:\\.|[^\]\\])*\])[*+]\$$/.exec(pattern);
  return m?.[1] ? patternRegExp(`^${m[1]}$`) : undefined;
}

// With the u flag a surrogate code point matches only where it is not half of a pair.
const wellFormed = (s: string) => s.isWellFormed();

/** One character the schema's pattern allows in any position. */
function charArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  if (!schema.pattern) return anyCodePoint;
  const cls = singleClass(schema.pattern);
  if (!cls) return anyCodePoint;
  // A negated class allows almost everything: filter the rich pool. A positive one is small:
  // draw from it (fast-check builds strings from a regular expression's character class).
  return cls.source.startsWith('^[^') ? anyCodePoint.filter((c) => cls.test(c)) : fc.stringMatching(cls).filter((c) => cls.test(c));
}

/** A length in [min, max], both ends likely. */
function lengthArbitrary(min: number, max: number): fc.Arbitrary<number> {
  return fc.oneof(fc.constantFrom(min, max), fc.integer({ min, max }));
}

function stringOfLength(unit: fc.Arbitrary<string>, length: fc.Arbitrary<number>): fc.Arbitrary<string> {
  return length.chain((n) => fc.array(unit, { minLength: n, maxLength: n }).map((chars) => chars.join('')));
}

function integerBounds(schema: JsonSchema): { min: number; max: number } {
  return { min: schema.minimum ?? Number.MIN_SAFE_INTEGER, max: schema.maximum ?? Number.MAX_SAFE_INTEGER };
}

export function validValue(contract: ContractSpec, raw: JsonSchema): fc.Arbitrary<JsonValue> {
  const schema = contract.resolve(raw);
  if (schema.enum) return fc.constantFrom(...(schema.enum as JsonValue[]));
  switch (schema.type) {
    case 'integer': {
      const { min, max } = integerBounds(schema);
      // fc.integer is 32-bit; bigInt covers the full safe range and is biased to its bounds.
      return fc.oneof(fc.constantFrom(min, max), fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number));
    }
    case 'string': {
      const min = schema.minLength ?? 0;
      const max = schema.maxLength ?? Math.max(min, DEFAULT_MAX_LENGTH);
      const whole = schema.pattern ? patternRegExp(schema.pattern) : undefined;
      return stringOfLength(charArbitrary(schema), lengthArbitrary(min, max)).filter((s) => wellFormed(s) && (whole === undefined || whole.test(s)));
    }
    case 'array': {
      const items = schema.items ?? {};
      return fc.array(validValue(contract, items), { maxLength: schema.maxItems ?? DEFAULT_MAX_ITEMS });
    }
    case 'object':
      return validObject(contract, schema).map(({ entries }) => new JsonObject(entries));
    default:
      throw new Error(`no valid-value derivation for schema type ${String(schema.type)}`);
  }
}

/** A valid object as ordered entries; fields outside `required` may be left out. */
function validObject(contract: ContractSpec, schema: JsonSchema): fc.Arbitrary<JsonObject> {
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const fields = properties.map(([name, prop]) => {
    const value = validValue(contract, prop);
    return required.has(name) ? value.map((v) => [[name, v] as const]) : fc.option(value, { nil: undefined }).map((v) => (v === undefined ? [] : [[name, v] as const]));
  });
  return fc
    .tuple(...fields)
    .map((parts) => parts.flat())
    .chain((entries) => fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length }))
    .map((entries) => new JsonObject(entries));
}

/** A NewPet-like plain record from a valid object, for the round-trip comparison. */
export function recordOf(value: JsonValue): Record<string, JsonValue> {
  if (!(value instanceof JsonObject)) throw new Error('not an object');
  return Object.fromEntries(value.entries);
}

/** Any JSON value, including objects with prototype-polluting keys, for extra fields. */
export const anyJson: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<JsonValue>(null, true, false, 0, -1, '', '__proto__'),
    fc.string(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (Object.is(d, -0) ? new RawNumber('-0') : d)),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.array(fc.tuple(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype'), fc.string()), tie('value')), { maxLength: 3 }).map((entries) => new JsonObject(entries)),
  ),
})).value;

const WRONG_TYPE_SAMPLES: Record<string, JsonValue[]> = {
  integer: ['1', '', 'abc', true, false, null, [], [1], new JsonObject([]), new JsonObject([['value', 1]])],
  string: [0, 1, -1.5, true, false, null, [], ['a'], new JsonObject([])],
  object: [[], [new JsonObject([])], 'object', '', 0, 1, true, null],
  array: [new JsonObject([]), 'array', 0, true, null],
};

function wrongType(type: string): fc.Arbitrary<Violation> {
  const samples = WRONG_TYPE_SAMPLES[type] ?? [];
  return fc.constantFrom(...samples).map((value) => ({ value, field: '', reason: `not ${type}` }));
}

/**
 * Integers the schema refuses: just past each bound, far past it (1e300, 2^64, 1e400 which
 * parses to Infinity), `-0` when zero is below the minimum, the first unsafe integer 2^53 when
 * the maximum is 2^53 − 1, and fractions.
 */
function invalidInteger(schema: JsonSchema): fc.Arbitrary<Violation> {
  const { min, max } = integerBounds(schema);
  const literals = ['1e300', '-1e300', '1e400', '18446744073709551616', '1.5', '0.5', `${min}.5`, `${max}.5`, `${max}e1`];
  if (min > 0) literals.push('-0', '0', '-1');
  literals.push(String(BigInt(min) - 1n), String(BigInt(max) + 1n));
  if (max === Number.MAX_SAFE_INTEGER) literals.push('9007199254740992', '9007199254740993');
  if (schema.format === 'int32') literals.push('2147483648', '-2147483649');
  const below = fc.bigInt({ min: -(2n ** 70n), max: BigInt(min) - 1n });
  const above = fc.bigInt({ min: BigInt(max) + 1n, max: 2n ** 70n });
  return fc.oneof(
    fc.constantFrom(...literals),
    below.map(String),
    above.map(String),
    fc.tuple(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 1, max: 99 })).map(([i, f]) => `${i}.${f}`),
  ).map((text) => ({ value: new RawNumber(text), field: '', reason: `integer ${text} out of range or fractional` }));
}

function invalidString(contract: ContractSpec, schema: JsonSchema): fc.Arbitrary<Violation> {
  const min = schema.minLength ?? 0;
  const options: fc.Arbitrary<Violation>[] = [];
  const valid = validValue(contract, schema) as fc.Arbitrary<string>;
  if (schema.maxLength !== undefined) {
    const over = stringOfLength(charArbitrary(schema), lengthArbitrary(schema.maxLength + 1, schema.maxLength + 64));
    options.push(over.map((value) => ({ value, field: '', reason: `${codePointLength(value)} code points, over maxLength ${schema.maxLength}` })));
  }
  if (min > 0) options.push(stringOfLength(charArbitrary(schema), fc.integer({ min: 0, max: min - 1 })).map((value) => ({ value, field: '', reason: `under minLength ${min}` })));
  if (schema.pattern) {
    const whole = patternRegExp(schema.pattern);
    const spliced = fc.tuple(valid, hostileCodePoint, fc.nat()).map(([base, bad, at]) => {
      const chars = [...base];
      chars.splice(at % (chars.length + 1), 0, bad);
      // Keep within maxLength so the pattern, not the length, is what fails.
      return (schema.maxLength !== undefined && chars.length > schema.maxLength ? chars.slice(chars.length - schema.maxLength) : chars).join('');
    });
    options.push(spliced.filter((value) => !whole.test(value) && codePointLength(value) >= min).map((value) => ({ value, field: '', reason: `breaks pattern ${schema.pattern}` })));
  }
  // The contract's strings are well-formed Unicode whatever their pattern: a lone surrogate is refused.
  const lonely = fc.tuple(valid, fc.integer({ min: 0xd800, max: 0xdfff }), fc.nat()).map(([base, unit, at]) => {
    const chars = [...base];
    chars.splice(at % (chars.length + 1), 0, String.fromCharCode(unit));
    return chars.join('');
  });
  options.push(lonely.filter((value) => !wellFormed(value)).map((value) => ({ value, field: '', reason: 'holds a lone surrogate' })));
  return fc.oneof(...options);
}

function invalidEnum(schema: JsonSchema): fc.Arbitrary<Violation> {
  const allowed = (schema.enum ?? []) as readonly JsonValue[];
  const strings = allowed.filter((v): v is string => typeof v === 'string');
  const near = strings.flatMap((s) => [s.toUpperCase(), s[0]?.toUpperCase() + s.slice(1), `${s} `, ` ${s}`, `${s}\u0000`, s.slice(0, -1), `${s}s`, s.normalize('NFD') + '\u0301']);
  return fc
    .oneof(fc.constantFrom<JsonValue>('', ...near), fc.string({ maxLength: 12 }), fc.constantFrom<JsonValue>(0, 1, true, null, [], [strings[0] ?? '']))
    .filter((value) => !allowed.includes(value))
    .map((value) => ({ value, field: '', reason: 'not in the enumeration' }));
}

const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', ' ', 'id', 'Name', 'name ', 'name\u0000', 'categoryid', 'STATUS', '$ref'];

function invalidObject(contract: ContractSpec, schema: JsonSchema): fc.Arbitrary<Violation> {
  const properties = schema.properties ?? {};
  const names = Object.keys(properties);
  const base = validObject(contract, schema);
  const options: fc.Arbitrary<Violation>[] = [wrongType('object')];
  for (const name of schema.required ?? []) {
    options.push(base.map((obj) => ({ value: new JsonObject(obj.entries.filter(([k]) => k !== name)), field: name, reason: `required ${name} missing` })));
  }
  if (schema.additionalProperties === false || schema.unevaluatedProperties === false) {
    const key = fc.oneof(fc.constantFrom(...EXTRA_KEYS), fc.string({ minLength: 1, maxLength: 8 })).filter((k) => !names.includes(k));
    options.push(
      fc.tuple(base, key, anyJson, fc.nat()).map(([obj, k, v, at]) => {
        const entries = [...obj.entries];
        entries.splice(at % (entries.length + 1), 0, [k, v]);
        return { value: new JsonObject(entries), field: k, reason: `extra field ${JSON.stringify(k)}` };
      }),
    );
  }
  for (const name of names) {
    const prop = properties[name] as JsonSchema;
    options.push(
      fc.tuple(base, invalidValue(contract, prop)).map(([obj, bad]) => {
        const entries = obj.entries.filter(([k]) => k !== name);
        entries.push([name, bad.value]);
        return { value: new JsonObject(entries), field: bad.field ? `${name}.${bad.field}` : name, reason: `${name}: ${bad.reason}` };
      }),
    );
  }
  return fc.oneof(...options);
}

export function invalidValue(contract: ContractSpec, raw: JsonSchema): fc.Arbitrary<Violation> {
  const schema = contract.resolve(raw);
  if (schema.enum) return invalidEnum(schema);
  switch (schema.type) {
    case 'integer':
      return fc.oneof(wrongType('integer'), invalidInteger(schema));
    case 'string':
      return fc.oneof(wrongType('string'), invalidString(contract, schema));
    case 'object':
      return invalidObject(contract, schema);
    default:
      throw new Error(`no invalid-value derivation for schema type ${String(schema.type)}`);
  }
}

/**
 * Parameter values travel as text, and the server coerces text to the schema's type, so "3" is a
 * valid integer there. An invalid parameter is text that denotes no valid value: non-numeric
 * text, numbers out of range or fractional, enum misses, strings breaking length or pattern.
 */
export function invalidParameterText(contract: ContractSpec, raw: JsonSchema): fc.Arbitrary<string> {
  const schema = contract.resolve(raw);
  if (schema.type === 'integer' && !schema.enum) {
    const numeric = invalidInteger(schema).map((v) => (v.value as RawNumber).text);
    const text = fc.oneof(fc.constantFrom('abc', 'true', 'null', 'NaN', 'Infinity', '-Infinity', '1\u0000', '\u0000', '1 2', '١', '𝟏', '1\u0301'), fc.string({ minLength: 1, maxLength: 6, unit: anyCodePoint }));
    // Text Number() reads as a valid integer is either canonical (valid) or a non-canonical
    // spelling of one (a 400, replayed in regressions.ts: lenientIntegers): neither is drawn.
    return fc.oneof(numeric, text).filter((s) => !integerTextIsValid(s, schema));
  }
  // A URL carries UTF-8 only: a lone surrogate would arrive as U+FFFD, another value than drawn.
  return invalidValue(contract, schema)
    .filter((v) => typeof v.value === 'string' && wellFormed(v.value))
    .map((v) => v.value as string);
}

/** Text that the server's coercion (Number(text)) turns into an integer the schema allows. */
function integerTextIsValid(text: string, schema: JsonSchema): boolean {
  const n = Number(text);
  const { min, max } = integerBounds(schema);
  return text.trim() !== '' && Number.isInteger(n) && n >= min && n <= max;
}

