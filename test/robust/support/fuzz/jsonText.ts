/**
 * JSON values that JSON.stringify cannot write: number literals kept as typed (`-0`, `1e300`,
 * `9007199254740992`, `1e400`), and objects as ordered entries, so a body can carry a duplicate
 * key or an own `__proto__` key exactly as a hostile client would send it.
 */

/** A number written verbatim into the JSON text. */
export class RawNumber {
  constructor(readonly text: string) {}
  toJSON(): string {
    return `RawNumber(${this.text})`;
  }
}

/** An object as its entries, in order; keys may repeat. */
export class JsonObject {
  constructor(readonly entries: ReadonlyArray<readonly [string, JsonValue]>) {}
  toJSON(): Record<string, string> {
    return { JsonObject: this.entries.map(([k, v]) => `${JSON.stringify(k)}: ${serialize(v)}`).join(', ') };
  }
}

export type JsonValue = null | boolean | number | string | RawNumber | JsonObject | readonly JsonValue[];

export type Layout = 'compact' | 'spaced' | 'escaped';

/**
 * JSON text for `value`. `spaced` adds insignificant whitespace; `escaped` writes every non-ASCII
 * character as `\uXXXX` (surrogate pairs for astral ones) — the same string to a parser, other bytes.
 */
export function serialize(value: JsonValue, layout: Layout = 'compact'): string {
  const sep = layout === 'spaced' ? ' \n\t' : '';
  const str = (s: string) => (layout === 'escaped' ? escapeNonAscii(JSON.stringify(s)) : JSON.stringify(s));
  const write = (v: JsonValue): string => {
    if (v instanceof RawNumber) return v.text;
    if (v instanceof JsonObject) return `{${sep}${v.entries.map(([k, x]) => `${str(k)}${sep}:${sep}${write(x)}`).join(`,${sep}`)}${sep}}`;
    if (Array.isArray(v)) return `[${sep}${v.map(write).join(`,${sep}`)}${sep}]`;
    if (typeof v === 'string') return str(v);
    if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(`${v} has no JSON form; use RawNumber`);
    return JSON.stringify(v);
  };
  return write(value);
}

function escapeNonAscii(jsonString: string): string {
  let out = '';
  for (let i = 0; i < jsonString.length; i++) {
    const unit = jsonString.charCodeAt(i);
    out += unit < 0x80 ? jsonString[i] : `\\u${unit.toString(16).padStart(4, '0')}`;
  }
  return out;
}

/** A plain object (e.g. a NewPet) as a JsonObject in the given key order. */
export function objectOf(record: Record<string, JsonValue>, order: readonly string[] = Object.keys(record)): JsonObject {
  return new JsonObject(order.filter((k) => k in record).map((k) => [k, record[k] as JsonValue] as const));
}
