import { defineConfig } from 'vitest/config';

/**
 * The suites, as vitest projects, one folder of test/ each. `npm test` runs `quick`, the loop a
 * newcomer runs after every change (about a minute on two cores); the slow proofs run in named
 * suites that CI runs too, each with an npm script (`npm run test:<name>`), so none is lost to get
 * the quick one fast:
 *
 *   quick         test/quick/ and test/storage/, the server on SQLite (the contract suite on
 *                 SQLite, the mock and the sandbox), and each feature's tests beside it
 *                 (src/features/<name>/*.test.ts)
 *   storage       test/storage/ and the features' *.storage.test.ts again on PGlite and a real
 *                 PostgreSQL (DATABASE_URL), directly and through a PgBouncer in transaction mode
 *                 the tests start; test/storage-only/ (PGlite, PostgreSQL or PgBouncer alone) here only
 *   tools         test/tools/: the contract's tools: lint rules, the breaking-change gate, releases, conformance
 *   processes     test/processes/: `npm start`, the sandbox and the other scripts as processes
 *   loop          test/loop/: copies of the project running the whole spec loop (generate, lint, dev, recipes)
 *   browser       test/browser/: Chromium: the rendered docs and CORS from a page
 *
 * `npm run test:robust` (vitest.robust.config.ts) holds the slowest proofs against the built
 * server, in test/robust/. test/quick/suites.test.ts checks that every test file is in a suite's
 * folder and that every file that runs once per store is in test/storage/ or test/storage-only/.
 */
export const SUITE_FOLDERS = ['quick', 'storage', 'storage-only', 'tools', 'processes', 'loop', 'browser', 'robust'] as const;

const inFolder = (...folders: string[]) => folders.map((folder) => `test/${folder}/**/*.test.ts`);
/**
 * A feature's tests live in its folder with its stage, tables and settings: `<name>.test.ts` in
 * the quick suite, `<name>.storage.test.ts` (once per store) in quick on SQLite and in storage.
 */
export const FEATURE_TESTS = 'src/features/*/*.test.ts';
const FEATURE_STORAGE_TESTS = 'src/features/*/*.storage.test.ts';

export default defineConfig({
  test: {
    // The token issuer of every server a test starts, in process or as a process: a spec pasted
    // with oauth2 or openIdConnect schemes starts in every suite, as `npm test` must pass untouched.
    // Its address never answers (`.invalid`), so a token there is unchecked (503); the tests send
    // keys, and test/quick/oauth.test.ts starts a real issuer of its own.
    env: { OAUTH_ISSUER: 'https://issuer.invalid', OAUTH_AUDIENCE: 'https://animal-store.example/v1' },
    testTimeout: 60_000,
    // PGlite runs initdb in WebAssembly at every start: seconds when idle, a minute on a loaded machine.
    hookTimeout: 300_000,
    // Two cores: run files two at a time so the real servers and browsers don't starve each other.
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      // TEST_STORAGE tells test/support/server.ts (and the contract suite) which stores this suite runs on.
      // Quick files share a process per worker (not isolated): the server's modules are loaded, and
      // the spec's validators compiled (src/http/openapiBackend.ts), once per worker instead of once per
      // file, which was a third of the suite's time. So a quick file leaves nothing behind: it
      // closes what it starts and restores any environment variable it sets.
      { extends: true, test: { name: 'quick', include: [...inFolder('quick', 'storage'), FEATURE_TESTS], isolate: false, env: { TEST_STORAGE: 'sqlite' } } },
      { extends: true, test: { name: 'storage', include: [...inFolder('storage', 'storage-only'), FEATURE_STORAGE_TESTS], env: { TEST_STORAGE: 'pglite,postgres,pgbouncer' } } },
      ...(['tools', 'processes', 'loop'] as const).map((name) => ({ extends: true as const, test: { name, include: inFolder(name), env: { TEST_STORAGE: 'sqlite' } } })),
      // The docs the browser opens are built once, before any of its files (test/browser/support/buildDocs.ts).
      { extends: true, test: { name: 'browser', include: inFolder('browser'), env: { TEST_STORAGE: 'sqlite' }, globalSetup: ['test/browser/support/buildDocs.ts'] } },
    ],
  },
});
