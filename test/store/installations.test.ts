import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Installation } from '@slack/bolt';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import {
  createInstallations,
  NoInstallationError,
  prepareSealing,
  SealingKeyError,
} from '../../src/store/installations.js';
import { createSealer } from '../../src/store/sealing.js';

const dir = mkdtempSync(join(tmpdir(), 'bot-installations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = randomBytes(32);
const OTHER_KEY = randomBytes(32);
const NOW = 1_795_262_400_000;

const install = (teamId: string, token: string, extra: Partial<Installation> = {}): Installation => ({
  team: { id: teamId },
  enterprise: undefined,
  user: { id: 'U0INSTALLER', token: undefined, scopes: undefined },
  bot: { token, scopes: ['commands', 'chat:write'], id: 'B0BOT', userId: 'U0BOT' },
  appId: 'A0APP',
  isEnterpriseInstall: false,
  ...extra,
});

let n = 0;
const fresh = async (): Promise<{ store: Store; path: string }> => {
  n += 1;
  const path = join(dir, String(n), 'bot.sqlite');
  return { store: await openStore({ kind: 'sqlite', path }), path };
};

describe('installations in the store', () => {
  it('stores each workspace by its team id and gives back only its own token', async () => {
    const { store } = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    await installations.storeInstallation(install('T0ONE', 'xoxb-one-secret-token'));
    await installations.storeInstallation(install('T0TWO', 'xoxb-two-secret-token'));
    const one = await installations.fetchInstallation({
      teamId: 'T0ONE',
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    const two = await installations.fetchInstallation({
      teamId: 'T0TWO',
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect(one.bot?.token).toBe('xoxb-one-secret-token');
    expect(two.bot?.token).toBe('xoxb-two-secret-token');
    expect(one.user.id).toBe('U0INSTALLER');
    await expect(
      installations.fetchInstallation({
        teamId: 'T0NONE',
        enterpriseId: undefined,
        isEnterpriseInstall: false,
      }),
    ).rejects.toThrow(NoInstallationError);
    await store.close();
  });

  it('stores an organisation-wide install by its enterprise id, serving every workspace of it', async () => {
    const { store } = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    await installations.storeInstallation(
      install('ignored', 'xoxb-org-secret-token', {
        team: undefined,
        enterprise: { id: 'E0ORG' },
        isEnterpriseInstall: true,
      }),
    );
    const found = await installations.fetchInstallation({
      teamId: 'T0ANY',
      enterpriseId: 'E0ORG',
      isEnterpriseInstall: true,
    });
    expect(found.bot?.token).toBe('xoxb-org-secret-token');
    expect(found.isEnterpriseInstall).toBe(true);
    await store.close();
  });

  it('keeps refreshed tokens and their expiry, forgets a revoked token, and deletes on uninstall, twice alike', async () => {
    const { store } = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    const query = { teamId: 'T0ONE', enterpriseId: undefined, isEnterpriseInstall: false };
    await installations.storeInstallation(
      install('T0ONE', 'xoxe.xoxb-rotating', {
        bot: {
          token: 'xoxe.xoxb-rotating',
          refreshToken: 'xoxe-1-refresh',
          expiresAt: 1_795_300_000,
          scopes: ['commands'],
          id: 'B0BOT',
          userId: 'U0BOT',
        },
      }),
    );
    expect((await installations.fetchInstallation(query)).bot).toMatchObject({
      refreshToken: 'xoxe-1-refresh',
      expiresAt: 1_795_300_000,
    });
    await installations.forgetBotToken('T0ONE');
    await installations.forgetBotToken('T0ONE');
    await expect(installations.fetchInstallation(query)).rejects.toThrow(NoInstallationError);
    await installations.deleteInstallation(query);
    await installations.deleteInstallation(query);
    expect(await store.db.selectFrom('installations').selectAll().execute()).toEqual([]);
    await store.close();
  });

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

  it('a sealed token copied into another workspace’s row does not open there', async () => {
    const { store } = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    await installations.storeInstallation(install('T0ONE', 'xoxb-one-secret-token'));
    await installations.storeInstallation(install('T0TWO', 'xoxb-two-secret-token'));
    const one = await store.db
      .selectFrom('installations')
      .select('bot_token')
      .where('id', '=', 'T0ONE')
      .executeTakeFirstOrThrow();
    await store.db
      .updateTable('installations')
      .set({ bot_token: one.bot_token })
      .where('id', '=', 'T0TWO')
      .execute();
    await expect(
      installations.fetchInstallation({
        teamId: 'T0TWO',
        enterpriseId: undefined,
        isEnterpriseInstall: false,
      }),
    ).rejects.toThrow(/installation:T0TWO:bot_token/);
    await store.close();
  });
});

describe('ENCRYPTION_KEY at start', () => {
  it('stops a start with the wrong key by name, changes nothing, and the right key works again', async () => {
    const { store } = await fresh();
    await prepareSealing(store, createSealer({ current: KEY }), NOW);
    await createInstallations(store, createSealer({ current: KEY }), () => NOW).storeInstallation(
      install('T0ONE', 'xoxb-one-secret-token'),
    );
    const before = await store.db.selectFrom('installations').selectAll().execute();
    const error = await prepareSealing(store, createSealer({ current: OTHER_KEY }), NOW).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SealingKeyError);
    expect(String(error)).toMatch(
      /^SealingKeyError: ENCRYPTION_KEY \(key [0-9a-f]{8}\) does not open the secrets in the store/,
    );
    expect(String(error)).not.toContain(OTHER_KEY.toString('base64'));
    expect(await store.db.selectFrom('installations').selectAll().execute()).toEqual(before);
    await prepareSealing(store, createSealer({ current: KEY }), NOW);
    const again = await createInstallations(
      store,
      createSealer({ current: KEY }),
      () => NOW,
    ).fetchInstallation({
      teamId: 'T0ONE',
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect(again.bot?.token).toBe('xoxb-one-secret-token');
    await store.close();
  });

  it('rotates: with the old key as ENCRYPTION_KEY_PREVIOUS every secret is sealed again, then the old key can go', async () => {
    const { store } = await fresh();
    await prepareSealing(store, createSealer({ current: KEY }), NOW);
    await createInstallations(store, createSealer({ current: KEY }), () => NOW).storeInstallation(
      install('T0ONE', 'xoxb-one-secret-token'),
    );
    await prepareSealing(store, createSealer({ current: OTHER_KEY, previous: KEY }), NOW);
    const newOnly = createSealer({ current: OTHER_KEY });
    await prepareSealing(store, newOnly, NOW);
    const found = await createInstallations(store, newOnly, () => NOW).fetchInstallation({
      teamId: 'T0ONE',
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect(found.bot?.token).toBe('xoxb-one-secret-token');
    await store.close();
  });
});
