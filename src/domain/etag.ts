/**
 * Entity tags (RFC 9110 §8.8.3, §13.1): the tag of a response, the If-None-Match test of a
 * conditional read and the If-Match test of a change. Which responses get one is the contract's
 * call: a 200 whose operation declares an `ETag` header; the conditional stage tags it and answers
 * If-None-Match (src/pipeline/answer/conditional.ts), the ranges stage compares If-Range with the
 * tag, and a handler that changes a resource compares If-Match with the tag of what it read (in
 * domain: handlers/updatePet.ts and handlers/deletePet.ts take it from src/domain/contract.ts).
 *
 * The tag is strong and derived from the answer itself, nothing stored: the SHA-256 of the body
 * text (the exact bytes sent, in UTF-8) followed by each header the handler set (a page's `Link`),
 * cut to 22 base64url characters (132 bits). So equal tags mean byte-identical answers: a page
 * that gains a pet, a pet that changes, or a page whose `Link` appears gets a new tag, and no
 * server-side cache or version counter can go stale. Cost: one SHA-256 of the body (crypto.hash, one call).
 */
import { createHash, hash } from 'node:crypto';

/** Cache-Control of a tagged answer: a browser may keep it but must ask every time (and can then send If-None-Match). */
export const REVALIDATE = 'private, no-cache';

/** The strong entity tag of an answer: its body (JSON text, or bytes) and the headers its handler set, in order. */
export function entityTag(body: string | Buffer, headers: Readonly<Record<string, string>>): string {
  let input = '';
  for (const name in headers) input += `\n${name}: ${headers[name] as string}`;
  if (typeof body === 'string') return `"${hash('sha256', body + input, 'base64url').slice(0, 22)}"`;
  return `"${createHash('sha256').update(body).update(input).digest('base64url').slice(0, 22)}"`;
}

/** The tag of a value answered as JSON with no headers of its handler's (getPet's animal): what If-Match is compared with. */
export function jsonEntityTag(value: unknown): string {
  return entityTag(JSON.stringify(value), {});
}

/**
 * The tag entityTag gives bytes answered without headers, from their SHA-256 (hex) when it is
 * already known (a photo stores its own): the same tag, without hashing megabytes again.
 */
export function entityTagOfDigest(sha256Hex: string): string {
  return `"${Buffer.from(sha256Hex, 'hex').toString('base64url').slice(0, 22)}"`;
}

/**
 * Whether an If-Range field value lets a Range be served (RFC 9110 §13.1.5): it is an entity tag
 * equal to `etag` by strong comparison. A weak tag never matches, and neither does a date: the
 * service sends no Last-Modified, so no date of it can be exact. Not matching means the whole
 * answer (200), never a refusal.
 */
export function ifRangeMatches(field: string, etag: string): boolean {
  return field.trim() === etag;
}

const SPACE = 0x20;
const TAB = 0x09;
const COMMA = 0x2c;
const QUOTE = 0x22;

/**
 * Whether an If-None-Match field value matches `etag` (a strong tag, `"…"`) by weak comparison
 * (RFC 9110 §8.8.3.2): `*`, or a list element whose opaque tag equals it, with or without `W/`.
 * Empty list elements and whitespace around commas are allowed (§5.6.1). Anything else is not a
 * list of entity tags and matches nothing from that point on, so the answer is the full 200: a
 * malformed condition never hides a change. Node joins repeated If-None-Match fields with ", ".
 */
export function ifNoneMatchMatches(field: string, etag: string): boolean {
  return listMatches(field, etag, true);
}

/**
 * Whether an If-Match field value matches `etag`, the current state's tag (RFC 9110 §13.1.1):
 * `*`, or a list element equal to it by strong comparison, so a weak tag (`W/"…"`) never
 * matches. A malformed value matches nothing: the change is refused (412), never made blind.
 */
export function ifMatchMatches(field: string, etag: string): boolean {
  return listMatches(field, etag, false);
}

/** `*`, or an element of a list of entity tags equal to `etag`; `weak`: a `W/` tag counts too. */
function listMatches(field: string, etag: string, weak: boolean): boolean {
  const n = field.length;
  let i = 0;
  while (i < n && (field.charCodeAt(i) === SPACE || field.charCodeAt(i) === TAB)) i++;
  if (field.charCodeAt(i) === 0x2a /* * */) {
    let j = i + 1;
    while (j < n && (field.charCodeAt(j) === SPACE || field.charCodeAt(j) === TAB)) j++;
    return j === n;
  }
  while (i < n) {
    const c = field.charCodeAt(i);
    if (c === SPACE || c === TAB || c === COMMA) {
      i++;
      continue;
    }
    // An optional weak indicator, case-sensitive (%s"W/").
    const isWeak = c === 0x57 /* W */ && field.charCodeAt(i + 1) === 0x2f; /* / */
    if (isWeak) i += 2;
    if (field.charCodeAt(i) !== QUOTE) return false;
    const end = field.indexOf('"', i + 1);
    if (end === -1) return false;
    if ((weak || !isWeak) && end + 1 - i === etag.length && field.startsWith(etag, i)) return true;
    i = end + 1;
    // After a tag: whitespace, then a comma or the end.
    while (i < n && (field.charCodeAt(i) === SPACE || field.charCodeAt(i) === TAB)) i++;
    if (i < n && field.charCodeAt(i) !== COMMA) return false;
  }
  return false;
}
