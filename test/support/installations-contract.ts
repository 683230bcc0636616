import { randomBytes } from 'node:crypto';
import type { Installation } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { balanceChanges } from '../../src/feed/deltas.js';
import { feedQueries } from '../../src/feed/queries.js';
import { createLogger } from '../../src/logger.js';
import { serviceState } from '../../src/service-state.js';
import type { Store } from '../../src/store/database.js';
import { createInstallations, NoInstallationError } from '../../src/store/installations.js';
import { type InstallationId, installationId, ONE_WORKSPACE } from '../../src/store/keys.js';
import { prepareSealing, SealingKeyError } from '../../src/store/rotation.js';
import { createSealer } from '../../src/store/sealing.js';
import { subscriptionRow } from './factories.js';

/**
 * Installations (many workspaces) on each database the bot supports: each `fresh()` is a new,
 * empty store, closed by the test.
 */

export const KEY = randomBytes(32);
const OTHER_KEY = randomBytes(32);
export const NOW = 1_795_262_400_000;
const silent = createLogger({ level: 'silent', secrets: [] });

export const install = (teamId: string, token: string, extra: Partial<Installation> = {}): Installation => ({
  team: { id: teamId },
  enterprise: undefined,
  user: { id: 'U0INSTALLER', token: undefined, scopes: undefined },
  bot: { token, scopes: ['commands', 'chat:write'], id: 'B0BOT', userId: 'U0BOT' },
  appId: 'A0APP',
  isEnterpriseInstall: false,
  ...extra,
});

/** Installs each of `ids` with a token of its own: the store's pace and leases are kept only for an installation. */
export async function installed(store: Store, ...ids: string[]): Promise<void> {
  const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
  for (const id of ids) await installations.storeInstallation(install(id, `xoxb-${id}-token`));
}

export function installationsContract(name: string, fresh: () => Promise<Store>): void {
  describe(`installations on ${name}`, () => {
    it('stores each workspace by its team id and gives back only its own token', async () => {
      const store = await fresh();
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
      const store = await fresh();
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
      const store = await fresh();
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
      // The summary says which sealing of the token the row holds: another token, another sealing.
      const sealing = async () => (await installations.summaryOf(installationId('T0ONE')))?.tokenSealing;
      const first = await sealing();
      expect(first).toMatch(/^[\w-]{16}$/);
      expect(await sealing()).toBe(first);
      await installations.storeInstallation(install('T0ONE', 'xoxe.xoxb-rotated'));
      expect(await sealing()).not.toBe(first);
      await installations.forgetBotToken(installationId('T0ONE'));
      expect(await sealing()).toBeUndefined();
      await installations.forgetBotToken(installationId('T0ONE'));
      await expect(installations.fetchInstallation(query)).rejects.toThrow(NoInstallationError);
      await installations.deleteInstallation(query);
      await installations.deleteInstallation(query);
      expect(await store.db.selectFrom('installations').selectAll().execute()).toEqual([]);
      await store.close();
    });

    it('says with each summary whether the service rejects its key: its own mark only, and no more once cleared', async () => {
      const store = await fresh();
      const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
      await installed(store, 'T0ONE', 'T0TWO', 'T0ONEX');
      const state = (id: string) => serviceState(store, silent, { installation: installationId(id) });
      await state('T0ONE').markKeyRejected(NOW);
      // The one workspace's mark is no installation's.
      await serviceState(store, silent, { installation: ONE_WORKSPACE }).markKeyRejected(NOW);
      const rejected = async () =>
        [...(await installations.summariesOf(['T0ONE', 'T0TWO', 'T0ONEX'].map(installationId))).values()]
          .filter((s) => s.keyRejected)
          .map((s) => s.id);
      expect(await rejected()).toEqual(['T0ONE']);
      // A claim of no installation reads nothing.
      const before = store.statements();
      expect(await installations.summariesOf([])).toEqual(new Map());
      expect(store.statements()).toBe(before);
      await state('T0ONE').markKeyAccepted();
      expect(await rejected()).toEqual([]);
      await store.close();
    });

    it('deletes a workspace’s feeds, readings and poll on uninstall, and its readings with a new key; another’s stay', async () => {
      const store = await fresh();
      const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
      const feedOf = async (id: InstallationId) => {
        await installations.storeInstallation(install(id, `xoxb-${id}-secret-token`));
        const q = feedQueries(store, id);
        await store.transaction(async (trx) => {
          await q.insert(
            trx,
            subscriptionRow({
              id: `sub-${id}`,
              team_id: id,
              channel_id: 'G0FIN',
              subscriber_id: 'U1',
              created_at: NOW,
            }),
          );
          await q.insertReading(trx, NOW, { BTC: { title: 'Bitcoin', balance: '1' } });
          await q.insertChanges(trx, NOW, balanceChanges({}, { BTC: { title: 'Bitcoin', balance: '1' } }));
          await q.startPoll(trx, NOW, NOW);
        });
        return q;
      };
      const one = await feedOf(installationId('T0ONE'));
      const two = await feedOf(installationId('T0TWO'));
      const counts = async () =>
        Object.fromEntries(
          await Promise.all(
            (['feed_subscriptions', 'balance_history', 'feed_changes', 'singletons'] as const).map(
              async (table) => [
                table,
                (await store.db.selectFrom(table).select('installation_id').execute())
                  .map((r) => r.installation_id)
                  .sort()
                  .join(),
              ],
            ),
          ),
        );

      // What the account before it held back or was seen paying is not the new account's either.
      const ONE = installationId('T0ONE');
      await store.db
        .insertInto('feed_held')
        .values({
          installation_id: ONE,
          subscription_id: 'S1',
          currency: 'BTC',
          amount: '0.0001',
          held_at: NOW,
        })
        .execute();
      await store.db
        .insertInto('invoices_seen')
        .values({ installation_id: ONE, invoice_id: 'I1', paid: 1, seen_at: NOW })
        .execute();
      await store.db
        .insertInto('invoices_paid')
        .values({
          installation_id: ONE,
          channel_id: 'C1',
          invoice_id: 'I1',
          title: 'T',
          amount: '1',
          currency: 'BTC',
          link: '',
          how: 'seen',
          paid_at: NOW,
        })
        .execute();
      await store.db
        .insertInto('invoice_states_seen')
        .values({ installation_id: ONE, invoice_id: 'I1', status: 'open', pay_status: 'paid', seen_at: NOW })
        .execute();
      // A new key (perhaps another merchant's) is never compared with the account before it.
      await installations.connectPaymentKey(ONE, 'key-one', 'U1', NOW);
      expect(await one.latestReading(store.db)).toBeUndefined();
      expect(await one.changeCounts(store.db, { since: 0, upTo: Number.MAX_SAFE_INTEGER })).toEqual({
        rises: 0,
        falls: 0,
      });
      expect(await one.active(store.db)).toHaveLength(1);
      for (const table of ['feed_held', 'invoices_seen', 'invoices_paid', 'invoice_states_seen'] as const)
        expect(
          await store.db
            .selectFrom(table)
            .select('installation_id')
            .where('installation_id', '=', ONE)
            .execute(),
          table,
        ).toEqual([]);
      await installations.deleteInstallation({
        teamId: 'T0ONE',
        enterpriseId: undefined,
        isEnterpriseInstall: false,
      });
      expect(await counts()).toEqual({
        feed_subscriptions: 'T0TWO',
        balance_history: 'T0TWO',
        feed_changes: 'T0TWO',
        singletons: 'T0TWO',
      });
      await installations.disconnectPaymentKey(installationId('T0TWO'), NOW);
      expect(await two.latestReading(store.db)).toBeUndefined();
      expect(await two.active(store.db)).toHaveLength(1);
      await store.close();
    });

    it('disconnects only together with what is done within: a failure there leaves the account connected', async () => {
      const store = await fresh();
      const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
      await installations.storeInstallation(install('T0ONE', 'xoxb-one-secret-token'));
      await installations.connectPaymentKey(installationId('T0ONE'), 'key-of-one', 'U0ONE', NOW);
      const failing = installations.disconnectPaymentKey(installationId('T0ONE'), NOW + 1, async (trx) => {
        await trx.deleteFrom('watches').where('installation_id', '=', installationId('T0ONE')).execute();
        throw new Error('the watches could not be ended');
      });
      await expect(failing).rejects.toThrow('the watches could not be ended');
      expect(await installations.paymentKeyOf(installationId('T0ONE'))).toBe('key-of-one');
      let within = 0;
      await installations.disconnectPaymentKey(installationId('T0ONE'), NOW + 2, async () => {
        within += 1;
      });
      expect(within).toBe(1);
      expect(await installations.paymentKeyOf(installationId('T0ONE'))).toBeUndefined();
      await store.close();
    });

    it('a sealed token copied into another workspace’s row does not open there', async () => {
      const store = await fresh();
      const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
      await installations.storeInstallation(install('T0ONE', 'xoxb-one-secret-token'));
      await installations.storeInstallation(install('T0TWO', 'xoxb-two-secret-token'));
      const one = await store.db
        .selectFrom('installations')
        .select('bot_token')
        .where('id', '=', installationId('T0ONE'))
        .executeTakeFirstOrThrow();
      await store.db
        .updateTable('installations')
        .set({ bot_token: one.bot_token })
        .where('id', '=', installationId('T0TWO'))
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

  describe(`ENCRYPTION_KEY at start, on ${name}`, () => {
    it('stops a start with the wrong key by name, changes nothing, and the right key works again', async () => {
      const store = await fresh();
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
      const store = await fresh();
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
}
