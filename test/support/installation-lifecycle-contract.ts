import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { enqueue } from '../../src/outbox.js';
import { claimRefresh, releaseRefresh } from '../../src/runner/refresh-lease.js';
import { serviceState } from '../../src/service-state.js';
import type { Store } from '../../src/store/database.js';
import { firstSight } from '../../src/store/events.js';
import { homeCoins } from '../../src/store/home-coins.js';
import { createInstallations, INSTALLATION_TABLES } from '../../src/store/installations.js';
import { eventKey, type InstallationId, installationId } from '../../src/store/keys.js';
import { reserveSlot } from '../../src/store/pace.js';
import { createSealer } from '../../src/store/sealing.js';
import { invoiceSightings } from '../../src/watches/invoices-seen.js';
import { invoice } from './factories.js';
import { install, installed, KEY, NOW } from './installations-contract.js';

/**
 * What installing again, connecting a key and uninstalling do to what the store holds of an
 * installation, on each database the bot supports (issue 28: points 1, 2 and 8).
 */

/**
 * Tables that are no installation's own by `installation_id`, each for its reason. A new table
 * must be named either here or in INSTALLATION_TABLES: uninstalling must know about it.
 */
const NOT_BY_INSTALLATION_ID: Record<string, string> = {
  installations: 'the installation itself: its row goes last',
  service_state: 'keys name their installation (src/store/keys.ts): deleted by key',
  seen_events: 'ids name their installation (src/store/keys.ts): deleted by key',
};

const silent = createLogger({ level: 'silent', secrets: [] });
const query = (teamId: string) => ({ teamId, enterpriseId: undefined, isEnterpriseInstall: false });

/** Every row of every table, as text: what is left of an installation is found by its id. */
async function everything(store: Store): Promise<Record<string, string>> {
  const tables = await store.db.introspection.getTables();
  const out: Record<string, string> = {};
  for (const { name } of tables)
    out[name] = JSON.stringify(
      await store.db
        .selectFrom(name as never)
        .selectAll()
        .execute(),
    );
  return out;
}

export function installationLifecycleContract(name: string, fresh: () => Promise<Store>): void {
  describe(`an installation's lifecycle, on ${name}`, () => {
    it('keeps who installed first and the connected account when a member installs again', async () => {
      const store = await fresh();
      const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
      await installations.storeInstallation(install('T0ONE', 'xoxb-one-first-token'));
      await installations.connectPaymentKey(
        installationId('T0ONE'),
        'merchant-key-of-the-admin',
        'U0ADMIN',
        NOW,
      );
      await installations.storeInstallation(
        install('T0ONE', 'xoxb-one-second-token', {
          user: { id: 'U0MEMBER', token: undefined, scopes: undefined },
        }),
      );
      const summary = await installations.summaryOf(installationId('T0ONE'));
      expect(summary?.installerUserId).toBe('U0INSTALLER');
      expect(summary?.account).toEqual({ connectedBy: 'U0ADMIN', connectedAt: NOW });
      expect(await installations.paymentKeyOf(installationId('T0ONE'))).toBe('merchant-key-of-the-admin');
      // The install's own part is renewed.
      expect((await installations.fetchInstallation(query('T0ONE'))).bot?.token).toBe(
        'xoxb-one-second-token',
      );
      await store.close();
    });

    it('knows, for every table, whether uninstalling must empty it of the installation', async () => {
      const store = await fresh();
      const tables = await store.db.introspection.getTables();
      const unknown = tables
        .filter((t) => !(t.name in NOT_BY_INSTALLATION_ID))
        .filter((t) => !(INSTALLATION_TABLES as readonly string[]).includes(t.name))
        .map((t) => t.name);
      expect(unknown, 'tables uninstalling knows nothing of: add them to INSTALLATION_TABLES').toEqual([]);
      for (const table of INSTALLATION_TABLES) {
        const columns = tables.find((t) => t.name === table)?.columns.map((c) => c.name);
        expect(columns, table).toContain('installation_id');
      }
      await store.close();
    });

    it('leaves nothing of an uninstalled installation in any table, and all of another', async () => {
      const store = await fresh();
      const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
      for (const id of ['T0GONE', 'T0STAYS'].map(installationId)) {
        await installations.storeInstallation(install(id, `xoxb-${id}-token`));
        await installations.connectPaymentKey(id, `key-of-${id}`, 'U0ADMIN', NOW);
        await serviceState(store, silent, { installation: id }).markKeyRejected(NOW);
        await firstSight(store, eventKey(id, 'event:Ev0001'), NOW);
        await reserveSlot(store, id, NOW, 220);
        await claimRefresh(store, id, 'instance-1', NOW, 10_000);
        await homeCoins(store, id).choose('U0MEMBER', 'BTC');
        await store.transaction((trx) =>
          enqueue(trx, [{ channel: 'C0PAID', message: { text: 'paid' } } as never], NOW, id),
        );
        const paid = invoice({ payStatus: 'paid' });
        await invoiceSightings(id).lookedUp(store, paid, 'C0PAID', NOW);
      }
      await installations.deleteInstallation(query('T0GONE'));
      const left = await everything(store);
      for (const [table, rows] of Object.entries(left)) {
        expect(rows, table).not.toContain('T0GONE');
      }
      for (const table of [
        'installations',
        'service_state',
        'seen_events',
        'background_pace',
        'outbox',
        'singletons',
        'home_coin_choices',
        'invoices_seen',
        'invoices_paid',
      ])
        expect(left[table], table).toContain('T0STAYS');
      await store.close();
    });

    it('does not delete an install made after the uninstall it is told of (a late repeat of the event)', async () => {
      const store = await fresh();
      let now = NOW;
      const installations = createInstallations(store, createSealer({ current: KEY }), () => now);
      await installations.storeInstallation(install('T0ONE', 'xoxb-first-install'));
      now = NOW + 60_000;
      expect(await installations.uninstall(installationId('T0ONE'), NOW + 30_000)).toBe(true);
      now = NOW + 120_000;
      await installations.storeInstallation(install('T0ONE', 'xoxb-installed-again'));
      // The same event again, late: the install made since stays.
      expect(await installations.uninstall(installationId('T0ONE'), NOW + 30_000)).toBe(false);
      expect((await installations.fetchInstallation(query('T0ONE'))).bot?.token).toBe('xoxb-installed-again');
      expect(await installations.uninstall(installationId('T0ONE'), NOW + 180_000)).toBe(true);
      expect(await installations.summaryOf(installationId('T0ONE'))).toBeUndefined();
      await store.close();
    });

    it('forgets that the service rejected the key when another is connected, or it is disconnected', async () => {
      const store = await fresh();
      const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
      const state = (id: InstallationId) => serviceState(store, silent, { installation: id });
      for (const id of ['T0ONE', 'T0TWO'].map(installationId)) {
        await installations.storeInstallation(install(id, `xoxb-${id}-token`));
        await installations.connectPaymentKey(id, 'a-rejected-key', 'U0ADMIN', NOW);
        await state(id).markKeyRejected(NOW);
      }
      await installations.connectPaymentKey(installationId('T0ONE'), 'the-good-key', 'U0ADMIN', NOW + 1);
      expect(await state(installationId('T0ONE')).keyRejectedSince()).toBeUndefined();
      expect(await state(installationId('T0TWO')).keyRejectedSince()).toBe(NOW);
      await installations.disconnectPaymentKey(installationId('T0TWO'), NOW + 2);
      expect(await state(installationId('T0TWO')).keyRejectedSince()).toBeUndefined();
      await store.close();
    });

    it('keeps a refreshed token only over the one it replaces: never after another refresh, a revocation or an uninstall', async () => {
      const store = await fresh();
      const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
      const rotating = (token: string, expiresAt: number) =>
        install('T0ONE', token, {
          bot: {
            token,
            refreshToken: `${token}-refresh`,
            expiresAt,
            scopes: [],
            id: 'B0BOT',
            userId: 'U0BOT',
          },
        });
      await installations.storeInstallation(rotating('xoxe.xoxb-first', 1000));
      expect(await installations.storeRefreshed(rotating('xoxe.xoxb-second', 2000), 1000)).toBe(true);
      // A second refresh of the same token (another instance, late) finds it replaced: nothing written.
      expect(await installations.storeRefreshed(rotating('xoxe.xoxb-late', 2000), 1000)).toBe(false);
      expect((await installations.fetchInstallation(query('T0ONE'))).bot?.token).toBe('xoxe.xoxb-second');
      await installations.forgetBotToken(installationId('T0ONE'));
      expect(await installations.storeRefreshed(rotating('xoxe.xoxb-revived', 3000), 2000)).toBe(false);
      await installations.deleteInstallation(query('T0ONE'));
      expect(await installations.storeRefreshed(rotating('xoxe.xoxb-revived', 3000), 2000)).toBe(false);
      expect(await installations.summaryOf(installationId('T0ONE'))).toBeUndefined();
      await store.close();
    });

    it('keeps what a call with a replaced key said of it off the key connected since', async () => {
      const store = await fresh();
      const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
      await installations.storeInstallation(install('T0ONE', 'xoxb-one-token'));
      await installations.connectPaymentKey(installationId('T0ONE'), 'the-key-before', 'U0ADMIN', NOW);
      const before = serviceState(store, silent, { installation: installationId('T0ONE'), account: NOW });
      await installations.connectPaymentKey(installationId('T0ONE'), 'the-key-now', 'U0ADMIN', NOW + 1);
      const now = serviceState(store, silent, { installation: installationId('T0ONE'), account: NOW + 1 });
      // A call with the key before, in flight across Replace key, comes back rejected.
      await before.markKeyRejected(NOW + 2);
      expect(await now.keyRejectedSince()).toBeUndefined();
      await now.markKeyRejected(NOW + 3);
      expect(await now.keyRejectedSince()).toBe(NOW + 3);
      // Nor does a call with it that worked say the key now works.
      await before.markKeyAccepted();
      expect(await now.keyRejectedSince()).toBe(NOW + 3);
      await now.markKeyAccepted();
      expect(await now.keyRejectedSince()).toBeUndefined();
      await store.close();
    });

    it('lets a call in flight during an uninstall re-create neither the pace of its key nor its refresh lease (issue 37)', async () => {
      const store = await fresh();
      await installed(store, 'T0GONE');
      // Both taken before the uninstall, as a check or a refresh under way holds them.
      await reserveSlot(store, installationId('T0GONE'), NOW, 220);
      expect(await claimRefresh(store, installationId('T0GONE'), 'instance-1', NOW, 10_000)).toBe(true);
      await createInstallations(store, createSealer({ current: KEY }), () => NOW).uninstall(
        installationId('T0GONE'),
        NOW,
      );
      // What the calls still under way then write, one statement each.
      expect(await reserveSlot(store, installationId('T0GONE'), NOW + 1, 220)).toBe(NOW + 1);
      expect(await claimRefresh(store, installationId('T0GONE'), 'instance-2', NOW + 20_000, 10_000)).toBe(
        false,
      );
      await releaseRefresh(store, installationId('T0GONE'), 'instance-1');
      const left = await everything(store);
      for (const [table, rows] of Object.entries(left)) expect(rows, table).not.toContain('T0GONE');
      await store.close();
    });

    it('lets one instance at a time refresh an installation’s token, until it lets go or its lease runs out', async () => {
      const store = await fresh();
      await installed(store, 'T0ONE', 'T0TWO');
      expect(await claimRefresh(store, installationId('T0ONE'), 'instance-1', NOW, 10_000)).toBe(true);
      expect(await claimRefresh(store, installationId('T0ONE'), 'instance-2', NOW + 1, 10_000)).toBe(false);
      expect(await claimRefresh(store, installationId('T0TWO'), 'instance-2', NOW + 1, 10_000)).toBe(true);
      await releaseRefresh(store, installationId('T0ONE'), 'instance-2');
      expect(await claimRefresh(store, installationId('T0ONE'), 'instance-2', NOW + 2, 10_000)).toBe(false);
      await releaseRefresh(store, installationId('T0ONE'), 'instance-1');
      expect(await claimRefresh(store, installationId('T0ONE'), 'instance-2', NOW + 3, 10_000)).toBe(true);
      // A holder that never lets go (killed mid-refresh) holds it only until its lease runs out.
      expect(await claimRefresh(store, installationId('T0ONE'), 'instance-1', NOW + 10_002, 10_000)).toBe(
        false,
      );
      expect(await claimRefresh(store, installationId('T0ONE'), 'instance-1', NOW + 10_004, 10_000)).toBe(
        true,
      );
      await store.close();
    });
  });
}
