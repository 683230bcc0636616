import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Installation } from '@slack/bolt';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { createInstallations, NoInstallationError } from '../../src/store/installations.js';
import { type InstallationId, installationId } from '../../src/store/keys.js';
import { createSealer, keyIdOf, sealedKeyId } from '../../src/store/sealing.js';
import { install, KEY, NOW } from '../support/installations-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'bot-installations-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
const fresh = async (): Promise<Store> => {
  n += 1;
  return openStore({ kind: 'sqlite', path: join(dir, String(n), 'bot.sqlite') });
};
const query = (teamId: string) => ({ teamId, enterpriseId: undefined, isEnterpriseInstall: false });
const rotating = (token: string, expiresAt: number | undefined): Installation =>
  install('T0ONE', token, {
    bot: {
      token,
      refreshToken: `${token}-refresh`,
      expiresAt,
      scopes: ['commands'],
      id: 'B0BOT',
      userId: 'U0BOT',
    },
  });
const rowOf = (store: Store, id: InstallationId) =>
  store.db.selectFrom('installations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('storing and fetching an installation', () => {
  it('gives back its app, its scopes one by one, and no expiry when the token does not expire', async () => {
    const store = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    await installations.storeInstallation(install('T0ONE', 'xoxb-one'));
    const found = await installations.fetchInstallation(query('T0ONE'));
    expect(found.appId).toBe('A0APP');
    expect(found.bot?.scopes).toEqual(['commands', 'chat:write']);
    expect(found.bot?.expiresAt).toBeUndefined();
    expect((await rowOf(store, installationId('T0ONE'))).bot_token_expires_at).toBeNull();
    expect((await installations.summaryOf(installationId('T0ONE')))?.tokenExpiresAt).toBeUndefined();
    await store.close();
  });

  it('refuses an installation without a workspace, or without a bot token, and stores nothing', async () => {
    const store = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    const message = 'an installation without a workspace or a bot token cannot be stored';
    await expect(
      installations.storeInstallation(install('T0ONE', 'xoxb-one', { bot: undefined })),
    ).rejects.toThrow(message);
    await expect(
      installations.storeInstallation(install('T0ONE', 'xoxb-one', { team: undefined })),
    ).rejects.toThrow(message);
    expect(await store.db.selectFrom('installations').selectAll().execute()).toEqual([]);
    await store.close();
  });

  it('refuses an installation whose workspace id is no Slack id (a `like` wildcard in it), and stores nothing', async () => {
    const store = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    await expect(installations.storeInstallation(install('T0_NE', 'xoxb-one'))).rejects.toThrow(
      'not a Slack team or enterprise id',
    );
    expect(await store.db.selectFrom('installations').selectAll().execute()).toEqual([]);
    await store.close();
  });

  it('says which workspace has no installation, and names the error', async () => {
    const store = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    const error = await installations.fetchInstallation(query('T0NONE')).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(NoInstallationError);
    expect((error as Error).name).toBe('NoInstallationError');
    expect((error as Error).message).toBe('no installation for T0NONE');
    const without = await installations
      .fetchInstallation({ teamId: undefined, enterpriseId: undefined, isEnterpriseInstall: false })
      .catch((e: unknown) => e as Error);
    expect((without as Error).message).toBe('no installation for a request without a workspace');
    await store.close();
  });

  it('deletes nothing when asked to delete the installation of a request without a workspace', async () => {
    const store = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    await installations.storeInstallation(install('T0ONE', 'xoxb-one'));
    await installations.deleteInstallation({
      teamId: undefined,
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect((await installations.fetchInstallation(query('T0ONE'))).bot?.token).toBe('xoxb-one');
    await store.close();
  });
});

describe('secrets sealed with the previous key', () => {
  it('are sealed again with the current key when fetched, and open with it alone afterwards', async () => {
    const store = await fresh();
    const [old, next] = [randomBytes(32), randomBytes(32)];
    await createInstallations(store, createSealer({ current: old }), () => NOW).storeInstallation(
      rotating('xoxe.xoxb-one', 1_795_300_000),
    );
    const during = createInstallations(store, createSealer({ current: next, previous: old }), () => NOW);
    expect((await during.fetchInstallation(query('T0ONE'))).bot?.token).toBe('xoxe.xoxb-one');
    const row = await rowOf(store, installationId('T0ONE'));
    expect(sealedKeyId(row.bot_token as string)).toBe(keyIdOf(next));
    expect(sealedKeyId(row.bot_refresh_token as string)).toBe(keyIdOf(next));
    const after = createInstallations(store, createSealer({ current: next }), () => NOW);
    expect((await after.fetchInstallation(query('T0ONE'))).bot).toMatchObject({
      token: 'xoxe.xoxb-one',
      refreshToken: 'xoxe.xoxb-one-refresh',
    });
    await store.close();
  });

  it('a value sealed with the current key is left as it is when fetched', async () => {
    const store = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    await installations.storeInstallation(rotating('xoxe.xoxb-one', 1_795_300_000));
    const before = await rowOf(store, installationId('T0ONE'));
    await installations.fetchInstallation(query('T0ONE'));
    const after = await rowOf(store, installationId('T0ONE'));
    expect(after.bot_token).toBe(before.bot_token);
    expect(after.bot_refresh_token).toBe(before.bot_refresh_token);
    await store.close();
  });
});

describe('opening an installation’s secrets', () => {
  it('opens only what each use needs: a token that does not open spoils no payment key, nor a key the authorization', async () => {
    const store = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    await installations.storeInstallation(install('T0ONE', 'xoxb-one'));
    await installations.connectPaymentKey(installationId('T0ONE'), 'key-one', 'U0ONE', NOW);
    const good = await rowOf(store, installationId('T0ONE'));
    const spoil = (column: 'bot_token' | 'payment_api_key', value: string | null) =>
      store.db
        .updateTable('installations')
        .set({ [column]: value })
        .where('id', '=', good.id)
        .execute();
    // Sealed for another column: it does not open as this one.
    await spoil('payment_api_key', good.bot_token);
    expect((await installations.fetchInstallation(query('T0ONE'))).bot?.token).toBe('xoxb-one');
    await expect(installations.paymentKeyOf(good.id)).rejects.toThrow();
    await spoil('payment_api_key', good.payment_api_key);
    await spoil('bot_token', good.payment_api_key);
    expect(await installations.paymentKeyOf(good.id)).toBe('key-one');
    await expect(installations.fetchInstallation(query('T0ONE'))).rejects.toThrow();
    await store.close();
  });

  it('seals the payment key again with the current key when it is read, and no other column', async () => {
    const store = await fresh();
    const [old, next] = [randomBytes(32), randomBytes(32)];
    const before = createInstallations(store, createSealer({ current: old }), () => NOW);
    await before.storeInstallation(rotating('xoxe.xoxb-one', 1_795_300_000));
    await before.connectPaymentKey(installationId('T0ONE'), 'key-one', 'U0ONE', NOW);
    const during = createInstallations(store, createSealer({ current: next, previous: old }), () => NOW);
    expect(await during.paymentKeyOf(installationId('T0ONE'))).toBe('key-one');
    const row = await rowOf(store, installationId('T0ONE'));
    expect(sealedKeyId(row.payment_api_key as string)).toBe(keyIdOf(next));
    expect(sealedKeyId(row.bot_token as string)).toBe(keyIdOf(old));
    expect(sealedKeyId(row.bot_refresh_token as string)).toBe(keyIdOf(old));
    expect(
      await createInstallations(store, createSealer({ current: next }), () => NOW).paymentKeyOf(row.id),
    ).toBe('key-one');
    await store.close();
  });
});

describe('uninstalling at the moment of the install', () => {
  it('deletes an install made in the very millisecond of the uninstall it is told of', async () => {
    const store = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    await installations.storeInstallation(install('T0ONE', 'xoxb-one'));
    expect(await installations.uninstall(installationId('T0ONE'), NOW)).toBe(true);
    expect(await installations.summaryOf(installationId('T0ONE'))).toBeUndefined();
    await store.close();
  });
});

describe('keeping a refreshed token', () => {
  it('keeps its expiry, or none when the new token does not expire', async () => {
    const store = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    await installations.storeInstallation(rotating('xoxe.xoxb-one', 1_795_300_000));
    expect(await installations.storeRefreshed(rotating('xoxe.xoxb-two', 1_795_400_000), 1_795_300_000)).toBe(
      true,
    );
    expect((await installations.summaryOf(installationId('T0ONE')))?.tokenExpiresAt).toBe(1_795_400_000_000);
    expect((await installations.fetchInstallation(query('T0ONE'))).bot?.expiresAt).toBe(1_795_400_000);
    expect(await installations.storeRefreshed(rotating('xoxe.xoxb-three', undefined), 1_795_400_000)).toBe(
      true,
    );
    expect((await installations.summaryOf(installationId('T0ONE')))?.tokenExpiresAt).toBeUndefined();
    expect((await installations.fetchInstallation(query('T0ONE'))).bot).toMatchObject({
      token: 'xoxe.xoxb-three',
      expiresAt: undefined,
    });
    await store.close();
  });

  it('writes nothing, and says so, without a workspace, a bot, or the expiry it replaces', async () => {
    const store = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    await installations.storeInstallation(rotating('xoxe.xoxb-one', 1_795_300_000));
    const before = await rowOf(store, installationId('T0ONE'));
    const noBot = install('T0ONE', 'x', { bot: undefined });
    const noTeam = { ...rotating('xoxe.xoxb-two', 1_795_400_000), team: undefined };
    expect(await installations.storeRefreshed(noBot, 1_795_300_000)).toBe(false);
    expect(await installations.storeRefreshed(noTeam, 1_795_300_000)).toBe(false);
    expect(await installations.storeRefreshed(rotating('xoxe.xoxb-two', 1_795_400_000), undefined)).toBe(
      false,
    );
    expect(await rowOf(store, installationId('T0ONE'))).toEqual(before);
    await store.close();
  });
});

describe('an installation’s summary', () => {
  it('has no account until a key is connected by someone, even when a row holds only half of one', async () => {
    const store = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    await installations.storeInstallation(install('T0ONE', 'xoxb-one'));
    expect((await installations.summaryOf(installationId('T0ONE')))?.account).toBeUndefined();
    await store.db.updateTable('installations').set({ payment_key_connected_by: 'U0HALF' }).execute();
    expect((await installations.summaryOf(installationId('T0ONE')))?.account).toBeUndefined();
    await installations.connectPaymentKey(installationId('T0ONE'), 'pk-live-one', 'U0ADMIN', NOW + 5);
    await store.db.updateTable('installations').set({ payment_key_connected_by: null }).execute();
    expect((await installations.summaryOf(installationId('T0ONE')))?.account).toBeUndefined();
    await installations.connectPaymentKey(installationId('T0ONE'), 'pk-live-one', 'U0ADMIN', NOW + 5);
    expect((await installations.summaryOf(installationId('T0ONE')))?.account).toEqual({
      connectedBy: 'U0ADMIN',
      connectedAt: NOW + 5,
    });
    await store.close();
  });

  it('names the workspace an organisation-wide install was made from as its home', async () => {
    const store = await fresh();
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    await installations.storeInstallation(
      install('T0FROM', 'xoxb-org', { enterprise: { id: 'E0ORG' }, isEnterpriseInstall: true }),
    );
    await installations.storeInstallation(
      install('ignored', 'xoxb-org-only', {
        team: undefined,
        enterprise: { id: 'E0BARE' },
        isEnterpriseInstall: true,
      }),
    );
    expect(await installations.summaryOf(installationId('E0ORG'))).toMatchObject({
      id: 'E0ORG',
      home: { teamId: 'T0FROM', enterpriseId: 'E0ORG' },
      enterpriseInstall: true,
    });
    expect((await installations.summaryOf(installationId('E0BARE')))?.home).toEqual({
      teamId: 'E0BARE',
      enterpriseId: 'E0BARE',
    });
    await store.close();
  });
});
