import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The slow proofs run with `npm run test:robust` (vitest.robust.config.ts).
    exclude: ['test/robust/**', 'node_modules/**'],
    testTimeout: 60_000,
    // PGlite runs initdb in WebAssembly at every start: seconds when idle, a minute on a loaded machine.
    hookTimeout: 300_000,
    // Two cores: run files two at a time so the real servers and browsers don't starve each other.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
