/**
 * The suites of vitest.config.ts stay true as files come and go: every file they name exists, none
 * is in two, and every file that runs once per store (describeEachTarget, `targets`,
 * openTestStorage, the contract suite's targets) is in `storage`, so PGlite and PostgreSQL still
 * see it when `npm test` runs it on SQLite alone.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SUITES } from '../vitest.config.js';
import { projectRoot } from '../src/shared/paths.js';

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'robust' || entry.name === 'fixtures' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(projectRoot, path)] : [];
  });
}

const STORE_PER_TARGET = /\b(describeEachTarget|openTestStorage|selectTargets)\b|\{[^}]*\btargets\b[^}]*\} from '\.\/support\/server\.js'/;

describe('the named suites', () => {
  const named = Object.values(SUITES).flat();

  it('name only files that exist, each in one suite', () => {
    expect(named.filter((file) => !existsSync(join(projectRoot, file)))).toEqual([]);
    expect(named.filter((file, i) => named.indexOf(file) !== i)).toEqual([]);
  });

  it('put every file that runs once per store in `storage`', () => {
    const perStore = testFiles(join(projectRoot, 'test')).filter((file) => file !== 'test/suites.test.ts' && STORE_PER_TARGET.test(readFileSync(join(projectRoot, file), 'utf8')));
    const inStorage = [...SUITES.storage, ...SUITES.storageOnly] as string[];
    expect(perStore.length).toBeGreaterThan(5);
    expect(perStore.filter((file) => !inStorage.includes(file) && !(SUITES.tools as readonly string[]).includes(file))).toEqual([]);
  });
});
