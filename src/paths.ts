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
