import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    // fast-check runs many cases per property; keep the whole suite's budget generous.
    testTimeout: 30_000,
  },
});
