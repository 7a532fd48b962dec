/**
 * Lone surrogates in a JSON body. JSON may escape one (`"\ud800"`) and JSON.parse keeps it, but
 * UTF-8 cannot carry it (RFC 8259 §8.2): stored and read back it would turn into U+FFFD, a change
 * the client never asked for. The contract's strings are well-formed Unicode, and its patterns are
 * written for such strings only (portable ranges, no `\p{Cs}`), so the body reader refuses them.
 */

// String.prototype.isWellFormed and toWellFormed (ES2024, in Node 20): a lone surrogate in a key
// is named in the error's path as U+FFFD, as toWellFormed spells it.
const wellFormed = (text: string) => text.isWellFormed();

/**
 * The dotted path of the first string (value or key) in `value` that is not well-formed
 * Unicode (`""` for the body itself), or undefined when there is none.
 */
export function firstIllFormedString(value: unknown, path: readonly string[] = []): string | undefined {
  if (typeof value === 'string') return wellFormed(value) ? undefined : path.join('.');
  if (typeof value !== 'object' || value === null) return undefined;
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((item, index) => [String(index), item]) : Object.entries(value);
  for (const [key, item] of entries) {
    if (!wellFormed(key)) return [...path, key.toWellFormed()].join('.');
    const found = firstIllFormedString(item, [...path, key]);
    if (found !== undefined) return found;
  }
  return undefined;
}
