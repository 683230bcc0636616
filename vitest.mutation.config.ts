import { defineConfig } from 'vitest/config';
import { unitProject } from './vitest.config.js';

/** `npm run test:mutation` runs the unit project only (Stryker's vitest runner takes one config). */
export default defineConfig(unitProject);
