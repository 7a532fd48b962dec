import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:robust`: the slow proofs (crashes, shutdown under load, outages); CI runs them too.
 * They start the server `npm start` ships, the esbuild bundle: the globalSetup builds it once per
 * run when dist/ is missing or older than its sources (scripts/lib/bundle.ts).
 */
const merged = mergeConfig(
  base,
  defineConfig({
    test: {
      testTimeout: 300_000,
      // Two files at a time: most of a proof is waiting (a crash's restart, a drain, an outage, an
      // idle timeout, a balancer's health checks), so one file at a time left a core idle
      // (docs/performance.md, CI). Their bounds are for a busy two-core machine.
      maxWorkers: 2,
    },
  }),
);
// Not merged: mergeConfig concatenates arrays, which would keep the base suite's files and its
// exclusion of test/robust/**.
// Nor the base's projects: each would run every robust file once more.
const { projects: _baseSuites, ...single } = merged.test ?? {};
merged.test = { ...single, include: ['test/robust/**/*.test.ts'], exclude: ['node_modules/**'], globalSetup: ['test/robust/support/globalSetup.ts'] };
export default merged;
