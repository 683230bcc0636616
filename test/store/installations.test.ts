import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { createInstallations } from '../../src/store/installations.js';
import { createSealer } from '../../src/store/sealing.js';
import { installationLifecycleContract } from '../support/installation-lifecycle-contract.js';
import { install, installationsContract, KEY, NOW } from '../support/installations-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'bot-installations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
const fresh = async (): Promise<{ store: Store; path: string }> => {
  n += 1;
  const path = join(dir, String(n), 'bot.sqlite');
  return { store: await openStore({ kind: 'sqlite', path }), path };
};

installationsContract('SQLite', async () => (await fresh()).store);

describe('installations in a SQLite file', () => {
  it('never writes a token in plain text: not in the file, not in its write-ahead log', async () => {
    const { store, path } = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    await installations.storeInstallation(
      install('T0ONE', 'xoxb-plaintext-canary-7a1f', {
        bot: {
          token: 'xoxb-plaintext-canary-7a1f',
          refreshToken: 'xoxe-1-refresh-canary-9c2e',
          expiresAt: 1,
          scopes: [],
          id: 'B',
          userId: 'U',
        },
      }),
    );
    await store.db
      .updateTable('installations')
      .set({
        payment_api_key: createSealer({ current: KEY }).seal(
          'pk-live-canary-3d4b',
          'installation:T0ONE:payment_api_key',
        ),
      })
      .execute();
    const bytes = [path, `${path}-wal`]
      .filter(existsSync)
      .map((file) => readFileSync(file).toString('latin1'));
    expect(bytes.join('')).toContain('T0ONE');
    for (const secret of ['xoxb-plaintext-canary-7a1f', 'xoxe-1-refresh-canary-9c2e', 'pk-live-canary-3d4b'])
      expect(bytes.join('')).not.toContain(secret);
    await store.close();
  });
});
installationLifecycleContract('SQLite', async () => (await fresh()).store);
