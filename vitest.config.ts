import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: run files two at a time so the real servers and browsers don't starve each other.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
