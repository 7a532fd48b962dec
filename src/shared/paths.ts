import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project's root folder, found by walking up to package.json, so the same code works from
 * src/ (tsx, vitest) and from the bundle in dist/server/ (the built server).
 */
function findRoot(start: string): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`No package.json above ${start}`);
    dir = parent;
  }
  return dir;
}

export const projectRoot = findRoot(dirname(fileURLToPath(import.meta.url)));
export const bundledSpecPath = join(projectRoot, 'generated', 'openapi.json');
export const docsPath = join(projectRoot, 'dist', 'docs', 'index.html');

/**
 * The docs page the server serves (scripts/docs.ts writes it): the published page with one more
 * server listed first, whose URL is this placeholder followed by `/v1`. It is replaced with the
 * address the browser used (`http://` + the request's Host), so the Servers panel names this
 * server. The published folder (dist/docs/) never lists it.
 */
export const SERVED_ORIGIN_PLACEHOLDER = 'http://this-server.animal-store.invalid';

/** Where scripts/docs.ts writes the served page: dist/docs-server/index.html next to dist/docs/. */
export function servedDocsPath(docsFile: string): string {
  return join(dirname(dirname(docsFile)), 'docs-server', 'index.html');
}
