/**
 * Code points a fuzzer should try in names: fast-check's uniform choice over 0x10FFFF almost
 * never lands on the characters that break naive code (combining marks, bidi controls, astral
 * characters, noncharacters), so those are drawn on purpose, next to uniform choices.
 */
import fc from 'fast-check';

const ranges = (list: ReadonlyArray<readonly [number, number]>) => fc.oneof(...list.map(([min, max]) => fc.integer({ min, max })));

/** One code point, as a string of one or two UTF-16 units (a lone surrogate when it is one). */
export const anyCodePoint: fc.Arbitrary<string> = fc
  .oneof(
    { arbitrary: fc.integer({ min: 0x20, max: 0x7e }), weight: 3 },
    // Combining marks: a name may start with one or be nothing but them.
    { arbitrary: ranges([[0x300, 0x36f], [0x1ab0, 0x1aff], [0x20d0, 0x20ff], [0xfe20, 0xfe2f]]), weight: 2 },
    // Right-to-left scripts and the bidi controls that reorder text around them.
    { arbitrary: ranges([[0x5d0, 0x5ea], [0x600, 0x6ff], [0x200e, 0x200f], [0x202a, 0x202e], [0x2066, 0x2069]]), weight: 2 },
    // Astral: emoji, CJK extension B, the last code point; each is two UTF-16 units.
    { arbitrary: ranges([[0x1f300, 0x1faff], [0x20000, 0x2a6df], [0x10000, 0x10ffff]]), weight: 3 },
    // Joiners, BOM, replacement, noncharacters, line and paragraph separators, JSON-escaped ASCII.
    { arbitrary: fc.constantFrom(0x200d, 0xfeff, 0xfffd, 0xfffe, 0xffff, 0x10ffff, 0x2028, 0x2029, 0x22, 0x5c, 0x2f, 0x3c, 0x26, 0x27, 0xa0, 0xad), weight: 2 },
    // Anything, controls and surrogates included: the schema's pattern decides what is valid.
    { arbitrary: fc.integer({ min: 0, max: 0x10ffff }), weight: 3 },
  )
  .map((cp) => String.fromCodePoint(cp));

/**
 * Characters that a "no control characters" pattern must refuse: C0 and C1 controls (NUL
 * first), DEL, and lone surrogates of both halves. Used to break string patterns.
 */
export const hostileCodePoint: fc.Arbitrary<string> = fc
  .oneof(fc.constantFrom(0x0, 0x1, 0x9, 0xa, 0xd, 0x1b, 0x1f, 0x7f, 0x80, 0x85, 0x9f, 0xd800, 0xdbff, 0xdc00, 0xdfff), fc.integer({ min: 0xd800, max: 0xdfff }), fc.integer({ min: 0, max: 0x1f }))
  .map((cp) => String.fromCodePoint(cp));

/** Length in code points: what JSON Schema's minLength/maxLength count (and Ajv with it). */
export function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}
