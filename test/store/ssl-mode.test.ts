import { parse } from 'pg-connection-string';
import { afterEach, describe, expect, it } from 'vitest';
import { verifiedSslMode } from '../../src/store/database.js';

const warnings: string[] = [];
const listen = (warning: Error) => warnings.push(warning.message);
afterEach(() => {
  process.off('warning', listen);
  warnings.length = 0;
});

/** What node-postgres makes of a URL, and the warnings it printed doing so. */
async function connect(url: string) {
  process.on('warning', listen);
  const config = parse(url);
  await new Promise((resolve) => setImmediate(resolve));
  return config;
}

describe('sslmode in DATABASE_URL', () => {
  const url = (mode: string) => `postgres://bot:a-long-password@db.example.com:5432/payments?sslmode=${mode}`;

  it.each(['prefer', 'require', 'verify-ca'])(
    'sslmode=%s is verified, as node-postgres does anyway, without its warning',
    async (mode) => {
      const verified = verifiedSslMode(url(mode));
      expect(new URL(verified).searchParams.get('sslmode')).toBe('verify-full');
      expect((await connect(verified)).ssl).toBeTruthy();
      expect(warnings).toEqual([]);
    },
  );

  it('is what node-postgres prints a multi-line SECURITY WARNING for when left as written', async () => {
    await connect(url('require'));
    expect(warnings.join('\n')).toMatch(
      /^SECURITY WARNING: The SSL modes 'prefer', 'require', and 'verify-ca'/,
    );
  });

  it('leaves verify-full, disable, no sslmode and libpq-compatible URLs as they are', () => {
    for (const kept of [
      'postgres://db/payments?sslmode=verify-full&sslrootcert=/etc/ssl/ca.pem',
      'postgres://db/payments?sslmode=disable',
      'postgres://db/payments',
      'postgres://db/payments?uselibpqcompat=true&sslmode=require',
    ])
      expect(verifiedSslMode(kept)).toBe(kept);
  });
});
