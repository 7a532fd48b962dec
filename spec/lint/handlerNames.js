/**
 * The TypeScript name of an operation's handler: its export, and its file's name under handlers/.
 * Real APIs write operation ids as they like (`get-stations`, `create_booking`, `pets.list`,
 * `GetPet`); `npm run generate` needs a name it can declare. One rule, here, for generate
 * (scripts/generate.ts) and for the lint rule that refuses two ids with one name (./rules.js):
 *
 * - an id that is already a name (letters, digits, `_`, `$`, not starting with a digit, not a
 *   reserved word) stays as it is: `listPets`, `create_booking`, `GetPet`;
 * - any other is cut at every character a name cannot hold, and the pieces joined in camel case,
 *   the first as it is, the others with a capital first letter: `get-stations` → `getStations`,
 *   `pets.list` → `petsList`, `v2/list-pets` → `v2ListPets`;
 * - a name that would start with a digit gets a leading `_` (`2fa-verify` → `_2faVerify`), and a
 *   reserved word gets `Operation` after it (`delete` → `deleteOperation`).
 */

const NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** JavaScript's reserved words and the strict-mode ones, which a `const` cannot be named. */
const RESERVED = new Set(
  'break case catch class const continue debugger default delete do else enum export extends false finally for function if import in instanceof new null return super switch this throw true try typeof var void while with yield let static implements interface package private protected public await arguments eval'.split(' '),
);

/** The handler's name for `operationId`, or '' when the id holds no letter or digit at all. */
export function handlerName(operationId) {
  let name;
  if (NAME.test(operationId)) name = operationId;
  else {
    const pieces = operationId.split(/[^A-Za-z0-9_$]+/).filter((piece) => piece !== '');
    if (pieces.length === 0) return '';
    name = pieces.map((piece, i) => (i === 0 ? piece : piece[0].toUpperCase() + piece.slice(1))).join('');
  }
  if (/^[0-9]/.test(name)) name = `_${name}`;
  if (RESERVED.has(name)) name = `${name}Operation`;
  return name;
}

/**
 * The ids that share a handler name, as groups of two or more: the same name, or names that differ
 * only in case (their files would be one on a case-insensitive file system, macOS's and Windows'
 * by default). Each group names the file they would share.
 */
export function handlerNameClashes(operationIds) {
  const byFile = new Map();
  for (const id of operationIds) {
    const name = handlerName(id);
    if (name === '') continue;
    const file = name.toLowerCase();
    byFile.set(file, [...(byFile.get(file) ?? []), id]);
  }
  return [...byFile.values()].filter((ids) => new Set(ids).size > 1).map((ids) => ({ ids: [...new Set(ids)], name: handlerName(ids[0]) }));
}
