/**
 * Once per run of the browser suite (vitest.config.ts), before any file: `npm run docs` builds the
 * pages the docs tests open (dist/docs/, dist/docs-server/). Built once here instead of by each
 * file that opens them: two builds side by side rendered every Redoc page twice, neither from the
 * other's cache, and wrote the same files at once. What the build printed is given to the tests
 * (inject('docsBuildOutput')).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { projectRoot } from '../../../src/shared/paths.js';

declare module 'vitest' {
  export interface ProvidedContext {
    docsBuildOutput: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const { stdout } = await promisify(execFile)(join(projectRoot, 'node_modules', '.bin', 'tsx'), ['scripts/docs.ts'], { cwd: projectRoot });
  project.provide('docsBuildOutput', stdout);
}
