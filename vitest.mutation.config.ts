import { defineConfig } from 'vitest/config';
import { unitProject } from './vitest.config.js';

/**
 * `npm run test:mutation` runs the unit project only (Stryker's vitest runner takes one config).
 * One worker serves every test file instead of a fresh worker per file (`isolate: false`): the
 * libraries (Bolt, Kysely, libsql, zod) load once, which makes a mutant run about three times
 * faster. `fresh-modules.ts` still evaluates the project's own modules afresh for every file, so
 * a mutant in module-level code (a constant, the config schema) is tested as in an isolated run.
 */
export default defineConfig({
  test: { ...unitProject.test, isolate: false, setupFiles: ['test/support/fresh-modules.ts'] },
});
