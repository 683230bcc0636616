import { defineConfig } from 'vitest/config';

/** The fast tests: no child processes, no database server. Also what mutation testing runs. */
export const unitProject = {
  test: {
    name: 'unit',
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'test/postgres/**'],
    testTimeout: 10_000,
    // expect.poll looks again every 5 ms instead of 50: the tests wait for what they wait for,
    // not for the next tick of a slow poll (it is most of a mutant's run time in some files).
    expect: { poll: { interval: 5 } },
  },
};

export default defineConfig({
  test: {
    projects: [
      unitProject,
      {
        test: {
          name: 'postgres',
          include: ['test/postgres/**/*.test.ts'],
          globalSetup: ['test/postgres/global-setup.ts'],
          testTimeout: 20_000,
          hookTimeout: 300_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/postgres/global-setup.ts'],
          // Each file starts the real bot in a child process; timing assertions (the 3 s ack)
          // stay honest when files do not compete for the two cores.
          fileParallelism: false,
          testTimeout: 30_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
