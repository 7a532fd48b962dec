/**
 * The one `$ref` resolver of the tests that read the contract: @apidevtools/json-schema-ref-parser.
 * It dereferences a copy of the document (every `$ref` replaced by its target, shared targets
 * shared), so the checks walk plain objects and the caller's document stays as written.
 *
 * Refused, loudly: a `$ref` that points nowhere (the library's MissingPointerError), a cycle (the
 * walkers and Ajv would loop on a cyclic object; the contract has none), and an external `$ref`
 * (the bundled contract has only local ones; the library would leave it in place unresolved).
 */
import { $RefParser } from '@apidevtools/json-schema-ref-parser';

export interface DereferencedDocument<T extends object> {
  /** The copy with every `$ref` replaced by its target. */
  document: T;
  /** The node at a local JSON pointer (`#/components/schemas/Pet`) of the dereferenced copy. */
  at(pointer: string): unknown;
}

/** Throws at the first `$ref` (a string-valued `$ref` key) left in `value`. */
function assertNoRef(value: unknown, path: string, seen: WeakSet<object>): void {
  if (typeof value !== 'object' || value === null || seen.has(value)) return;
  seen.add(value);
  if (!Array.isArray(value) && typeof (value as { $ref?: unknown }).$ref === 'string') {
    throw new Error(`${path}: $ref ${(value as { $ref: string }).$ref} was not resolved (only local $refs are supported)`);
  }
  for (const [key, child] of Object.entries(value)) assertNoRef(child, `${path}/${key}`, seen);
}

export async function dereferenceDocument<T extends object>(document: T): Promise<DereferencedDocument<T>> {
  const parser = new $RefParser();
  const copy = structuredClone(document);
  const resolved = (await parser.dereference(copy, { resolve: { external: false }, dereference: { circular: false } })) as T;
  assertNoRef(resolved, '#', new WeakSet());
  return { document: resolved, at: (pointer) => parser.$refs.get(pointer) };
}
