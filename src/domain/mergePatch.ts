/**
 * RFC 7396 JSON Merge Patch: what a handler of an `application/merge-patch+json` body applies to
 * the value it has stored. The body reader parses such a body as JSON and validates it against
 * the declared schema (../http/bodies/json.ts); this says what it means. A member set to `null` removes that
 * member, an object merges into an object member by member, recursively, and anything else (an
 * array, a string, a number, `true`) replaces what was there whole; a patch that is not an object
 * replaces the whole value. Neither argument is changed: the result is a new value, sharing the
 * untouched parts of `target`.
 *
 * Handlers reach it through src/domain/contract.ts; it imports nothing, so it is in the shared layer
 * (test/quick/architecture.test.ts), next to the body readers it belongs with.
 */

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `target` with `patch` applied (RFC 7396 §2). Its result is what the stored value becomes, which
 * the handler checks before storing it: a patch may remove a member the stored schema requires
 * (the patch's own schema is validated before the handler runs, not the result).
 */
export function applyMergePatch(target: object, patch: object): Record<string, unknown>;
export function applyMergePatch(target: unknown, patch: unknown): unknown;
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete result[name];
    // Defined, not assigned: a member named "__proto__" (JSON.parse makes it an own member) stays a member.
    else Object.defineProperty(result, name, { value: applyMergePatch(result[name], value), enumerable: true, writable: true, configurable: true });
  }
  return result;
}
