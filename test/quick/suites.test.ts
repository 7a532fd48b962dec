/**
 * The suites of vitest.config.ts stay true as files come and go: every test file lives in a
 * suite's folder (one at test/'s top would run in none) or beside the feature it tests
 * (src/features/<name>/), and every file that runs once per store (describeEachTarget, `targets`,
 * openTestStorage, the contract suite's targets) is in test/storage/ (or test/storage-only/) or
 * is a feature's `*.storage.test.ts`, so PGlite and PostgreSQL still see it when `npm test` runs
 * it on SQLite alone.
 */
import { handlerName } from '../../spec/lint/handlerNames.js';
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

/**
 * What the tests add to the contract or to a database is made up, so that no API pasted into the
 * spec collides with it (issue 46: the Swagger Petstore's `placeOrder` and an `orders` table, both
 * once added by a test, failed `npm test` for a spec that had them). In the files that run in the
 * checkout (not test/loop/'s copies, not test/tools/'s frozen spec): a path added to the bundled
 * contract is under `/examples/`, an operationId is one of the seed operations (those of the frozen
 * copy, test/fixtures/spec/openapi.yaml) or ends in `Example`, and a table a test creates is named
 * `examples_…`. Documents a test writes from scratch (no `loadBundledSpec`) may say anything.
 */
describe('the names a test adds to the contract or a database are made up', () => {
  const files = [...testFiles(join(projectRoot, 'test')), ...testFiles(join(projectRoot, 'src'))]
    .filter((file) => !['loop', 'tools'].includes(suiteOf(file)) && file !== 'test/quick/suites.test.ts')
    .concat(['test/support', 'test/robust/support'].flatMap((dir) => readdirSync(join(projectRoot, dir)).filter((name) => name.endsWith('.ts')).map((name) => `${dir}/${name}`)));
  const seeds = new Set([...readFileSync(join(projectRoot, 'test/fixtures/spec/openapi.yaml'), 'utf8').matchAll(/operationId: (\w+)/g)].map((m) => m[1]));
  const found = (pattern: RegExp, onContract: boolean) =>
    files.flatMap((file) => {
      const text = readFileSync(join(projectRoot, file), 'utf8');
      if (onContract && !text.includes('loadBundledSpec(')) return [];
      return [...text.matchAll(pattern)].map((m) => `${file}: ${m[1]}`);
    });

  it('paths added to the bundled contract are under /examples/', () => {
    const added = found(/paths\[\s*['"`]([^'"`]+)['"`]\s*\]\s*=[^=]/g, true);
    expect(added.length).toBeGreaterThan(3);
    expect(added.filter((line) => !line.split(': ')[1]!.startsWith('/examples/'))).toEqual([]);
  });

  it('operationIds are the seed operations or end in Example (their handler names do: list-stations-example is listStationsExample)', () => {
    expect(seeds.size).toBeGreaterThanOrEqual(3);
    const ids = found(/operationId: ['"`]([^'"`\s]+)['"`]/g, true);
    expect(ids.length).toBeGreaterThan(3);
    expect(ids.filter((line) => { const id = line.split(': ')[1]!; return !seeds.has(id) && !handlerName(id).endsWith('Example'); })).toEqual([]);
  });

  it('tables a test creates are named examples_…', () => {
    const tables = found(/create table (?:if not exists )?["`]?(\w+)/gi, false);
    expect(tables.length).toBeGreaterThan(0);
    expect(tables.filter((line) => !line.split(': ')[1]!.startsWith('examples_'))).toEqual([]);
  });
});
