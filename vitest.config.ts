import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Cached objects are frozen: code that changes one in place fails its test (src/kube/cache.ts).
    env: { NRN_FREEZE_CACHE: '1' },
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        // fast-check runs many cases per property; keep the budget generous on a shared machine.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 30_000 },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        // Scenarios that crash, stall and flood whole processes: bounded here (NRN_RELIABILITY
        // unset), full with NRN_RELIABILITY=full (`npm run test:reliability`).
        test: {
          name: 'reliability',
          include: ['test/reliability/**/*.test.ts'],
          testTimeout: 600_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
