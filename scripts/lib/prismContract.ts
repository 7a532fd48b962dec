/**
 * The copies of the contract that Prism is given. Prism ignores the path of the server URL and
 * would serve (or proxy) `/pets` where the real server answers `/v1/pets`, so every copy carries
 * the base path in its paths. Kept apart from scripts/mock.ts so the Prism proxy tests can derive
 * the same copy without starting the mock.
 */
import { basePathOf, type OpenApiDocument } from '../../src/spec.js';

type Operation = { deprecated?: boolean; responses?: Record<string, unknown> };

function operationsOf(item: unknown): Operation[] {
  if (typeof item !== 'object' || item === null) return [];
  return Object.values(item).filter((op): op is Operation => typeof op === 'object' && op !== null && 'responses' in op);
}

/**
 * The contract with every path prefixed by the base path of the first server URL (`/v1/pets`,
 * `/v1/pets/{petId}`), and nothing else changed: what `prism proxy` validates traffic against.
 */
export function withBasePathInPaths(document: OpenApiDocument): OpenApiDocument {
  const base = basePathOf(document);
  const copy = structuredClone(document);
  const paths: NonNullable<OpenApiDocument['paths']> = {};
  for (const [path, item] of Object.entries(copy.paths ?? {})) paths[`${base}${path}`] = item;
  return { ...copy, paths };
}

/**
 * The contract as `prism mock` serves it: base path in the paths, plus two changes that keep
 * the mock's answers inside the contract.
 *
 * - No `Link` header: Prism would send the example `Link` on every page, so a client following
 *   `rel="next"` until it disappears would loop forever; without it the mock has one page.
 * - No `deprecated` flag: for a deprecated operation Prism overwrites the declared `Deprecation`
 *   header with its own `deprecation: true` (prism-http mocker, negotiateDeprecation), which breaks
 *   the declared pattern `^@-?[0-9]{1,15}$`. Without the flag it sends the contract's example
 *   (`@1795219200`), as the real server does.
 */
export function forMock(document: OpenApiDocument): OpenApiDocument {
  const copy = withBasePathInPaths(document);
  for (const item of Object.values(copy.paths ?? {})) {
    for (const op of operationsOf(item)) {
      delete op.deprecated;
      for (const response of Object.values(op.responses ?? {})) {
        if (typeof response === 'object' && response !== null && 'headers' in response) {
          const headers = (response as { headers?: Record<string, unknown> }).headers;
          if (headers) delete headers.Link;
        }
      }
    }
  }
  return copy;
}
