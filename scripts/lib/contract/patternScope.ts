/**
 * What a regular expression of the contract accepts, compared over single characters, so that
 * the breaking-change gate can tell a rewritten pattern from a changed one. Decidable for the
 * shape string schemas here use, one character class repeated over the whole value
 * (`^[…]*$`, `^[^…]+$`): such a pattern accepts a string exactly when it accepts each of its
 * characters, so comparing the class over every Unicode scalar value decides it. Surrogate code
 * points are left out: the contract's strings are well-formed Unicode (the server refuses a JSON
 * body holding a lone surrogate with a 400), so no pattern's verdict on one is ever observable.
 */

export type PatternRelation = 'same' | 'wider' | 'narrower' | 'other';

const LAST_CODE_POINT = 0x10ffff;
const SURROGATES = { first: 0xd800, last: 0xdfff };

/** `^[…]*$` or `^[…]+$`: the class as a one-character RegExp, and the quantifier. */
function repeatedClass(pattern: string): { one: RegExp; quantifier: string } | undefined {
  const match = /^\^(\[(?:\\.|[^\]\\])*\])([*+])\$$/su.exec(pattern);
  if (!match) return undefined;
  try {
    // JSON Schema patterns are ECMA-262 with the Unicode flag (as Ajv compiles them).
    return { one: new RegExp(`^${match[1]}$`, 'u'), quantifier: match[2]! };
  } catch {
    return undefined;
  }
}

/**
 * How the set of strings `after` accepts relates to the set `before` accepts: the same, a
 * superset (`wider`), a subset (`narrower`), or neither or not decidable here (`other`).
 */
export function comparePatterns(before: string, after: string): PatternRelation {
  if (before === after) return 'same';
  // A shared schema's pattern is judged once per place it is used (each request and response of
  // each operation, each release compared), and one judgement walks every code point: about half
  // a second. The answer depends on the two strings alone.
  const key = JSON.stringify([before, after]);
  if (!relations.has(key)) relations.set(key, compareOverCodePoints(before, after));
  return relations.get(key)!;
}

const relations = new Map<string, PatternRelation>();

function compareOverCodePoints(before: string, after: string): PatternRelation {
  const [was, is] = [repeatedClass(before), repeatedClass(after)];
  if (!was || !is || was.quantifier !== is.quantifier) return 'other';
  let gained = false;
  let lost = false;
  for (let point = 0; point <= LAST_CODE_POINT && !(gained && lost); point += 1) {
    if (point === SURROGATES.first) point = SURROGATES.last + 1;
    const character = String.fromCodePoint(point);
    const [old, now] = [was.one.test(character), is.one.test(character)];
    if (now && !old) gained = true;
    else if (old && !now) lost = true;
  }
  if (gained && lost) return 'other';
  return gained ? 'wider' : lost ? 'narrower' : 'same';
}
