import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEY_PROBE_MS, serviceState } from '../src/service-state.js';
import { openStore, type Store } from '../src/store/database.js';
import { type InstallationId, installationId, ONE_WORKSPACE } from '../src/store/keys.js';
import { captureLogs } from './support/bolt.js';

const NOW = 1_700_000_000_000;
const CONNECTED_AT = NOW - 5_000;

async function addInstallation(store: Store, id: InstallationId, connectedAt: number | null) {
  await store.db
    .insertInto('installations')
    .values({
      id,
      team_id: id,
      enterprise_id: null,
      is_enterprise_install: 0,
      app_id: 'A0APP',
      bot_token: null,
      bot_refresh_token: null,
      bot_token_expires_at: null,
      bot_id: 'B0BOT',
      bot_user_id: 'U0BOT',
      bot_scopes: 'commands',
      installer_user_id: 'U0INSTALLER',
      payment_api_key: null,
      payment_key_connected_by: null,
      payment_key_connected_at: connectedAt,
      created_at: NOW,
      updated_at: NOW,
    })
    .execute();
}

const rows = (store: Store) =>
  store.db.selectFrom('service_state').select(['key', 'value', 'updated_at']).orderBy('key').execute();

describe('the payment key’s state, as an operator sees it', () => {
  let dir: string;
  let store: Store;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'service-state-edges-'));
    store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one workspace: names PAYMENT_API_KEY, to be fixed in the configuration', async () => {
    const logs = captureLogs();
    const state = serviceState(store, logs.logger, { installation: ONE_WORKSPACE });
    expect(state.keySource).toBe('configuration');
    await state.markKeyRejected(NOW);
    await state.markKeyAccepted();
    expect(logs.lines.map((l) => [l.level, l.msg])).toEqual([
      [
        'error',
        'the payment service rejects PAYMENT_API_KEY: watches and feeds are paused until it works again',
      ],
      ['info', 'the payment service accepts PAYMENT_API_KEY again: watches and feeds resume'],
    ]);
  });

  it('many workspaces: names the workspace’s key, to be fixed in the workspace', async () => {
    await addInstallation(store, installationId('T0ONE'), CONNECTED_AT);
    const logs = captureLogs();
    const state = serviceState(store, logs.logger, {
      installation: installationId('T0ONE'),
      circuit: () => 'closed',
    });
    expect(state.keySource).toBe('workspace');
    await state.markKeyRejected(NOW);
    expect(await state.keyRejectedSince()).toBe(NOW);
    await state.markKeyAccepted();
    expect(logs.lines.map((l) => l.msg)).toEqual([
      'the payment service rejects the workspace’s payment API key: watches and feeds are paused until it works again',
      'the payment service accepts the workspace’s payment API key again: watches and feeds resume',
    ]);
  });

  it('records the rejection in the store, for every instance to read', async () => {
    const state = serviceState(store, captureLogs().logger, { installation: ONE_WORKSPACE });
    await state.markKeyRejected(NOW);
    expect(await rows(store)).toEqual([{ key: 'payment_key_rejected', value: 'rejected', updated_at: NOW }]);
    expect(await state.mayProbe(NOW)).toBe(true);
    expect(await rows(store)).toEqual([
      { key: 'payment_key_probe:', value: 'probe', updated_at: NOW },
      { key: 'payment_key_rejected', value: 'rejected', updated_at: NOW },
    ]);
    expect(await state.mayProbe(NOW + KEY_PROBE_MS - 1)).toBe(false);
    expect(await state.mayProbe(NOW + KEY_PROBE_MS)).toBe(true);
  });

  it('keeps a rejection seen with the account still connected, under the installation’s key', async () => {
    await addInstallation(store, installationId('T0ONE'), CONNECTED_AT);
    const logs = captureLogs();
    const state = serviceState(store, logs.logger, {
      installation: installationId('T0ONE'),
      circuit: () => 'closed',
      account: CONNECTED_AT,
    });
    await state.markKeyRejected(NOW);
    expect(await rows(store)).toEqual([
      { key: 'payment_key_rejected:T0ONE', value: 'rejected', updated_at: NOW },
    ]);
    expect(await state.keyRejectedSince()).toBe(NOW);
    expect(logs.lines).toHaveLength(1);
  });

  it('ignores what a call with a replaced account says of the key', async () => {
    await addInstallation(store, installationId('T0ONE'), CONNECTED_AT);
    const logs = captureLogs();
    const stale = serviceState(store, logs.logger, {
      installation: installationId('T0ONE'),
      circuit: () => 'closed',
      account: CONNECTED_AT - 1,
    });
    await stale.markKeyRejected(NOW);
    expect(await rows(store)).toEqual([]);
    expect(await stale.keyRejectedSince()).toBeUndefined();

    const current = serviceState(store, logs.logger, {
      installation: installationId('T0ONE'),
      circuit: () => 'closed',
      account: CONNECTED_AT,
    });
    await current.markKeyRejected(NOW);
    await stale.markKeyAccepted();
    expect(await current.keyRejectedSince()).toBe(NOW);
    await current.markKeyAccepted();
    expect(await current.keyRejectedSince()).toBeUndefined();
    expect(logs.lines.map((l) => l.level)).toEqual(['error', 'info']);
  });
});
