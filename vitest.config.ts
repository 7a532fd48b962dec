import { defineConfig } from 'vitest/config';

/**
 * The suites, as vitest projects. `npm test` runs `quick`, the loop a newcomer runs after every
 * change (about two minutes on two cores); the slow proofs run in named suites that CI runs too,
 * each with an npm script (`npm run test:<name>`), so none is lost to get the quick one fast:
 *
 *   quick    every file not named below, the server on SQLite (and the contract suite on SQLite,
 *            the mock and the sandbox)
 *   storage  the storage-backed files again on PGlite and a real PostgreSQL (DATABASE_URL), directly
 *            and through a PgBouncer in transaction mode the tests start
 *   tools    the contract's tools: lint rules, the breaking-change gate, releases, conformance
 *   processes  `npm start`, the sandbox and the other scripts as processes: start, signals, restart
 *   loop     copies of the project running the whole spec loop (generate, lint, dev, recipes)
 *   browser  Chromium: the rendered docs and CORS from a page
 *
 * `npm run test:robust` (vitest.robust.config.ts) holds the slowest proofs against the built server.
 * A file belongs to one suite by its name here; test/suites.test.ts checks that every file that
 * runs on the storage targets is in `storage`.
 */
export const SUITES = {
  storage: [
    'test/auth.test.ts',
    'test/conditional.test.ts',
    'test/contract/contract.test.ts',
    'test/createPet.test.ts',
    'test/deprecation.test.ts',
    'test/errors.test.ts',
    'test/getPet.test.ts',
    'test/idempotency.test.ts',
    'test/listPets.test.ts',
    'test/photos.test.ts',
    'test/roundTrip.test.ts',
  ],
  tools: [
    'test/breaking.test.ts',
    'test/clientPackage.test.ts',
    'test/clientRegistry.test.ts',
    'test/conformance.test.ts',
    'test/lint-rules.test.ts',
    'test/lint.test.ts',
    'test/portableContract.test.ts',
    'test/release.test.ts',
  ],
  loop: ['test/clientHeadersLoop.test.ts', 'test/dev.test.ts', 'test/generate.test.ts', 'test/spec-loop.test.ts', 'test/storeRecipes.test.ts'],
  /** Files that test PGlite or PostgreSQL alone (or through PgBouncer): in `storage` only. */
  storageOnly: ['test/pgliteStart.test.ts', 'test/postgresTls.test.ts', 'test/transactionPooler.test.ts'],
  processes: ['test/clientPackageNode.test.ts', 'test/databaseErrors.test.ts', 'test/keysCli.test.ts', 'test/lifecycle.test.ts', 'test/sandbox.test.ts', 'test/scriptsLifecycle.test.ts', 'test/tracingBundle.test.ts'],
  browser: ['test/browser-cors.test.ts', 'test/clientPackageBrowser.test.ts', 'test/docs.test.ts', 'test/docsVersions.test.ts'],
} as const;

const ROBUST = 'test/robust/**';
const named = [...SUITES.storageOnly, ...SUITES.tools, ...SUITES.processes, ...SUITES.loop, ...SUITES.browser];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    // PGlite runs initdb in WebAssembly at every start: seconds when idle, a minute on a loaded machine.
    hookTimeout: 300_000,
    // Two cores: run files two at a time so the real servers and browsers don't starve each other.
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      // TEST_STORAGE tells test/support/server.ts (and the contract suite) which stores this suite runs on.
      { extends: true, test: { name: 'quick', include: ['test/**/*.test.ts'], exclude: [ROBUST, 'node_modules/**', ...named], env: { TEST_STORAGE: 'sqlite' } } },
      { extends: true, test: { name: 'storage', include: [...SUITES.storage, ...SUITES.storageOnly], env: { TEST_STORAGE: 'pglite,postgres,pgbouncer' } } },
      { extends: true, test: { name: 'tools', include: [...SUITES.tools], env: { TEST_STORAGE: 'sqlite' } } },
      { extends: true, test: { name: 'processes', include: [...SUITES.processes], env: { TEST_STORAGE: 'sqlite' } } },
      { extends: true, test: { name: 'loop', include: [...SUITES.loop], env: { TEST_STORAGE: 'sqlite' } } },
      { extends: true, test: { name: 'browser', include: [...SUITES.browser], env: { TEST_STORAGE: 'sqlite' } } },
    ],
  },
});
