// Mutation testing of the unit suite: `npm run test:mutation` (minutes; not part of CI).
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  // Stryker's vitest runner, plus: a test file that fails to load kills the mutant (stryker/).
  testRunner: 'vitest-load-errors',
  plugins: ['@stryker-mutator/vitest-runner', './stryker/vitest-load-errors.mjs'],
  // related: a mutant runs only the test files that import its file. That matters for the ~900
  // static mutants (module-level code, code run in beforeAll), which otherwise run every test.
  vitest: { configFile: 'vitest.mutation.config.ts', related: true },
  mutate: ['src/**/*.ts', '!src/sandbox/**', '!src/main.ts'],
  coverageAnalysis: 'perTest',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // A unit run spends most of its time waiting on timers and sockets (about 20 s of CPU in 50 s),
  // so four runs share two cores without slowing one another much.
  concurrency: 4,
  timeoutMS: 10000,
  thresholds: { high: 95, low: 90, break: 90 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  // Reuses the last run's results for code and tests that did not change (reports/stryker-incremental.json).
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
};
