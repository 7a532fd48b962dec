/**
 * The suites of vitest.config.ts stay true as files come and go: every test file lives in a
 * suite's folder (one at test/'s top would run in none) or beside the feature it tests
 * (src/features/<name>/), and every file that runs once per store (describeEachTarget, `targets`,
 * openTestStorage, the contract suite's targets) is in test/storage/ (or test/storage-only/) or
 * is a feature's `*.storage.test.ts`, so PGlite and PostgreSQL still see it when `npm test` runs
 * it on SQLite alone.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FEATURE_TESTS, SUITE_FOLDERS } from '../../vitest.config.js';
import { projectRoot } from '../../src/shared/paths.js';

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(projectRoot, path)] : [];
  });
}

const suiteOf = (file: string) => file.split('/')[1] ?? '';
// FEATURE_TESTS, the features' glob, as a test of a path.
const FEATURE_TEST = new RegExp(`^${FEATURE_TESTS.replace(/\./g, '\\.').replace(/\*/g, '[^/]+')}$`);
const STORE_PER_TARGET = /\b(describeEachTarget|openTestStorage|selectTargets)\b|\{[^}]*\btargets\b[^}]*\} from '(\.\.\/)+(test\/)?support\/server\.js'/;

describe('the suites, a folder each', () => {
  const files = testFiles(join(projectRoot, 'test'));
  const featureFiles = testFiles(join(projectRoot, 'src'));

  it('hold every test file: none outside a suite folder', () => {
    expect(files.length).toBeGreaterThan(40);
    expect(files.filter((file) => !(SUITE_FOLDERS as readonly string[]).includes(suiteOf(file)) || file.split('/').length < 3)).toEqual([]);
  });

  it("hold each feature's tests in its folder, and no other test under src/", () => {
    expect(featureFiles.length).toBeGreaterThan(5);
    expect(featureFiles.filter((file) => !FEATURE_TEST.test(file))).toEqual([]);
  });

  it('put every file that runs once per store in test/storage/ (or test/storage-only/); the tools may open a store of their own', () => {
    const perStore = [...files, ...featureFiles].filter((file) => !file.startsWith('test/robust/') && file !== 'test/quick/suites.test.ts' && STORE_PER_TARGET.test(readFileSync(join(projectRoot, file), 'utf8')));
    expect(perStore.length).toBeGreaterThan(5);
    const inStorage = (file: string) => (file.startsWith('src/') ? file.endsWith('.storage.test.ts') : ['storage', 'storage-only', 'tools'].includes(suiteOf(file)));
    expect(perStore.filter((file) => !inStorage(file))).toEqual([]);
    // A feature's per-store file runs in both suites; one that is not per store would run twice for nothing.
    expect(featureFiles.filter((file) => file.endsWith('.storage.test.ts') && !perStore.includes(file))).toEqual([]);
  });
});
