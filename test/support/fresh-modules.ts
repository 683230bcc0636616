import { vi } from 'vitest';

// Mutation runs only (vitest.mutation.config.ts): the worker is shared between test files for speed,
// but the project's own modules are evaluated afresh for every file, so a mutant in module-level
// code (a constant, a schema) takes effect exactly as it would in an isolated worker.
vi.resetModules();
