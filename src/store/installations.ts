import type { Installation, InstallationQuery, InstallationStore } from '@slack/bolt';
import { type Kysely, sql } from 'kysely';
import type { Store } from './database.js';
import {
  type InstallationId,
  installationId,
  KEY_REJECTED_OF,
  keyRejectedKey,
  ownEventKeys,
  ownStateKeys,
} from './keys.js';
import { prepared } from './prepared.js';
import type { Tables } from './schema.js';
import { contextOf, type Secret, secretsOpener } from './sealed-columns.js';
import { type Sealer, sealingOf } from './sealing.js';

/**
 * The installations of the app in many-workspaces mode, on the bot's own store (both dialects),
 * as `@slack/oauth`'s `InstallationStore`: what Bolt's `authorize` reads on every request and
 * what the OAuth redirect writes. Secrets are sealed here, at the store's boundary: nothing above
 * sees ciphertext, nothing below sees plain text.
 */
export interface Installations extends Required<InstallationStore> {
  /**
   * `app_uninstalled` at `at` (ms): deletes the installation and all it owns, unless it was
   * installed after `at` (a late repeat of the event after the workspace installed again).
   * True when something was deleted.
   */
  uninstall(id: InstallationId, at: number): Promise<boolean>;
  /** `tokens_revoked`: the bot token is forgotten; the row stays until `app_uninstalled`. */
  forgetBotToken(id: InstallationId): Promise<void>;
  /** Who installed the app there, and whether its payment account is connected: no secret. */
  summaryOf(id: InstallationId): Promise<InstallationSummary | undefined>;
  /** The summaries of many installations in one read (a claim's): one not stored is missing. */
  summariesOf(ids: readonly InstallationId[]): Promise<Map<InstallationId, InstallationSummary>>;
  /** The installation's payment service API key, opened; undefined while none is connected. */
  paymentKeyOf(id: InstallationId): Promise<string | undefined>;
  /**
   * Keeps a refreshed bot token over the one it replaces: only while the installation still
   * holds a token that expires at `expiresAt` (seconds, as `@slack/oauth` has it). False, nothing
   * written, when another refresh, a revocation or an uninstall came first.
   */
  storeRefreshed(installation: Installation, expiresAt: number | undefined): Promise<boolean>;
  /** Stores the workspace's payment service API key, sealed, replacing any before it. */
  connectPaymentKey(id: InstallationId, apiKey: string, by: string, at: number): Promise<void>;
  /** Forgets the key and its account; `within` runs in the same transaction (ending what the key served). */
  disconnectPaymentKey(
    id: InstallationId,
    at: number,
    within?: (trx: Kysely<Tables>) => Promise<unknown>,
  ): Promise<void>;
}

export interface InstallationSummary {
  id: InstallationId;
  /** The workspace, or for an organisation-wide install the organisation, whose people it serves. */
  home: { teamId: string; enterpriseId: string | undefined };
  /** Installed for a whole Enterprise Grid organisation (stored by its enterprise id). */
  enterpriseInstall: boolean;
  installerUserId: string;
  /** Who connected the payment account and when; undefined while none is connected. */
  account: { connectedBy: string; connectedAt: number } | undefined;
  /** When the bot token expires (milliseconds since the epoch), with token rotation. */
  tokenExpiresAt: number | undefined;
  /**
   * Which sealing of the bot token the row holds (`sealingOf`: nothing secret): a new token, a
   * rotated or re-sealed one, or none (revoked) says so here, without opening the token.
   */
  tokenSealing: string | undefined;
  /** Whether the payment service was known to reject its key (`keyRejectedKey`), read with the rest. */
  keyRejected: boolean;
}

type Row = Tables['installations'];
/**
 * What one payment account said, kept to compare it with itself only: the feed's balance readings,
 * the changes it counted and the movements it held back, and the invoices seen paid and their
 * states. A new key (perhaps another merchant's) starts with none of it.
 */
const ACCOUNT_HISTORY = [
  'balance_history',
  'feed_changes',
  'feed_held',
  'invoices_seen',
  'invoices_paid',
  'invoice_states_seen',
] as const;
/** The rest of what is an installation's own (rows keyed by `installation_id`), besides its row. */
const OWN_WORK = [
  'watches',
  'watched_invoices',
  'feed_subscriptions',
  'singletons',
  'outbox',
  'background_pace',
  'home_coin_choices',
  'feed_settings',
] as const;
/**
 * Every table whose rows belong to one installation by `installation_id`: uninstalling deletes
 * them all (test/support/installation-lifecycle-contract.ts fails for a table missing here).
 */
export const INSTALLATION_TABLES = [...ACCOUNT_HISTORY, ...OWN_WORK] as const;

/** The row an installation or a request belongs to: the organisation for an organisation-wide install. */
export function installationIdFor(query: {
  teamId?: string | undefined;
  enterpriseId?: string | undefined;
  isEnterpriseInstall?: boolean | undefined;
}): InstallationId | undefined {
  const raw = query.isEnterpriseInstall && query.enterpriseId ? query.enterpriseId : query.teamId;
  return raw === undefined ? undefined : installationId(raw);
}

/** The row an installation from `@slack/oauth` (an install, a refreshed token) belongs to. */
export const installationIdOf = (installation: Installation): InstallationId | undefined =>
  installationIdFor({
    teamId: installation.team?.id,
    enterpriseId: installation.enterprise?.id,
    isEnterpriseInstall: installation.isEnterpriseInstall,
  });

/** Many installations' rows for their summaries, with whether each key is marked rejected: one statement. */
const summaryRows = prepared((db, ids: InstallationId[]) =>
  db
    .selectFrom('installations')
    .select([
      'id',
      'team_id',
      'enterprise_id',
      'is_enterprise_install',
      'installer_user_id',
      'payment_api_key',
      'payment_key_connected_by',
      'payment_key_connected_at',
      'bot_token_expires_at',
      'bot_token',
      (eb) =>
        eb
          .exists(
            eb
              .selectFrom('service_state')
              .select('key')
              .where('key', '=', sql<string>`${KEY_REJECTED_OF} || ${eb.ref('installations.id')}`),
          )
          .as('key_rejected'),
    ])
    .where('id', 'in', ids),
);

/** No installation for a request's workspace (never installed, uninstalled, or its token revoked). */
export class NoInstallationError extends Error {
  override readonly name = 'NoInstallationError';
}

export function createInstallations(store: Store, sealer: Sealer, clock: () => number): Installations {
  const { db } = store;
  const seal = (id: InstallationId, column: Secret, value: string | undefined) =>
    value === undefined ? null : sealer.seal(value, contextOf(id, column));

  const open = secretsOpener(db, sealer);

  /**
   * Connects, replaces or disconnects the payment account. The readings of the one before go
   * with it, in the same transaction: the feed never announces the difference between two
   * accounts' balances as a payment, and starts again from the new account's first reading.
   */
  const changeAccount = (
    id: InstallationId,
    values: Partial<Row>,
    within?: (trx: Kysely<Tables>) => Promise<unknown>,
  ) =>
    store.transaction(async (trx) => {
      await trx.updateTable('installations').set(values).where('id', '=', id).execute();
      await within?.(trx);
      for (const table of ACCOUNT_HISTORY)
        await trx.deleteFrom(table).where('installation_id', '=', id).execute();
      // What the service said of the key before is not said of this one.
      await trx.deleteFrom('service_state').where('key', '=', keyRejectedKey(id)).execute();
    });

  /**
   * Deletes the installation and everything that is its own, in one transaction, so nothing more
   * is checked or posted for it; not when it was installed after `at`. True when its row was there.
   */
  const removeAll = (id: InstallationId, at: number) =>
    store.transaction(async (trx) => {
      const row = await trx
        .selectFrom('installations')
        .select('created_at')
        .where('id', '=', id)
        .executeTakeFirst();
      if (row && Number(row.created_at) > at) return false;
      for (const table of INSTALLATION_TABLES)
        await trx.deleteFrom(table).where('installation_id', '=', id).execute();
      await trx.deleteFrom('service_state').where('key', 'like', ownStateKeys(id)).execute();
      await trx.deleteFrom('seen_events').where('id', 'like', ownEventKeys(id)).execute();
      await trx.deleteFrom('installations').where('id', '=', id).execute();
      return row !== undefined;
    });

  /** Many installations' summaries in one read; one not stored is missing. */
  async function summariesOf(
    ids: readonly InstallationId[],
  ): Promise<Map<InstallationId, InstallationSummary>> {
    if (ids.length === 0) return new Map();
    const { rows } = await summaryRows(db, [...ids]);
    return new Map(
      rows.map((row) => {
        const connected = row.payment_api_key !== null && row.payment_key_connected_by !== null;
        const enterpriseId = row.enterprise_id ?? undefined;
        const summary: InstallationSummary = {
          id: row.id,
          home: { teamId: row.team_id ?? enterpriseId ?? row.id, enterpriseId },
          enterpriseInstall: row.is_enterprise_install === 1,
          installerUserId: row.installer_user_id,
          account: connected
            ? {
                connectedBy: row.payment_key_connected_by as string,
                connectedAt: Number(row.payment_key_connected_at),
              }
            : undefined,
          tokenExpiresAt: row.bot_token_expires_at === null ? undefined : Number(row.bot_token_expires_at),
          tokenSealing: row.bot_token === null ? undefined : sealingOf(row.bot_token),
          // PostgreSQL says true or false, SQLite 1 or 0.
          keyRejected: Boolean(row.key_rejected),
        };
        return [row.id, summary];
      }),
    );
  }

  return {
    async storeInstallation(installation) {
      const id = installationIdOf(installation);
      const { bot } = installation;
      if (!id || !bot) throw new Error('an installation without a workspace or a bot token cannot be stored');
      const now = clock();
      const values = {
        team_id: installation.team?.id ?? null,
        enterprise_id: installation.enterprise?.id ?? null,
        is_enterprise_install: installation.isEnterpriseInstall ? 1 : 0,
        app_id: installation.appId ?? null,
        bot_token: seal(id, 'bot_token', bot.token),
        bot_refresh_token: seal(id, 'bot_refresh_token', bot.refreshToken),
        bot_token_expires_at: bot.expiresAt === undefined ? null : bot.expiresAt * 1000,
        bot_id: bot.id,
        bot_user_id: bot.userId,
        bot_scopes: bot.scopes.join(','),
        updated_at: now,
      };
      // Installing again (or a refreshed token) keeps the connected payment account and who
      // installed first: any member may run Add to Slack, and that hands nothing over.
      await db
        .insertInto('installations')
        .values({ id, ...values, installer_user_id: installation.user.id, created_at: now })
        .onConflict((oc) => oc.column('id').doUpdateSet(values))
        .execute();
    },

    async fetchInstallation(query) {
      const id = installationIdFor(query);
      // Not the payment key's columns: a request's authorization has no use for them.
      const row = id
        ? await db
            .selectFrom('installations')
            .select(['id', 'team_id', 'enterprise_id', 'is_enterprise_install', 'app_id'])
            .select(['installer_user_id', 'bot_token', 'bot_refresh_token', 'bot_token_expires_at'])
            .select(['bot_scopes', 'bot_id', 'bot_user_id'])
            .where('id', '=', id)
            .executeTakeFirst()
        : undefined;
      if (!row || row.bot_token === null) {
        throw new NoInstallationError(`no installation for ${id ?? 'a request without a workspace'}`);
      }
      const secrets = await open(row, ['bot_token', 'bot_refresh_token']);
      const enterprise = row.enterprise_id ? { id: row.enterprise_id } : undefined;
      return {
        team: row.team_id ? { id: row.team_id } : undefined,
        enterprise,
        isEnterpriseInstall: row.is_enterprise_install === 1,
        appId: row.app_id ?? undefined,
        user: { id: row.installer_user_id, token: undefined, scopes: undefined },
        bot: {
          token: secrets.bot_token as string,
          refreshToken: secrets.bot_refresh_token,
          expiresAt: row.bot_token_expires_at === null ? undefined : row.bot_token_expires_at / 1000,
          scopes: row.bot_scopes.split(',').filter(Boolean),
          id: row.bot_id,
          userId: row.bot_user_id,
        },
        tokenType: 'bot',
        authVersion: 'v2',
      } as Installation<'v2', boolean>;
    },

    /**
     * Uninstalled: the installation goes with everything that is its own (its tokens and key, its
     * watches and the invoices they check, its feeds, their balance readings and poll, its
     * messages not yet sent), in one transaction, so nothing more is checked or posted for it.
     */
    async deleteInstallation(query: InstallationQuery<boolean>) {
      const id = installationIdFor(query);
      if (id) await removeAll(id, Number.POSITIVE_INFINITY);
    },

    uninstall: (id, at) => removeAll(id, at),

    async storeRefreshed(installation, expiresAt) {
      const id = installationIdOf(installation);
      const { bot } = installation;
      if (!id || !bot || expiresAt === undefined) return false;
      const result = await db
        .updateTable('installations')
        .set({
          bot_token: seal(id, 'bot_token', bot.token),
          bot_refresh_token: seal(id, 'bot_refresh_token', bot.refreshToken),
          bot_token_expires_at: bot.expiresAt === undefined ? null : bot.expiresAt * 1000,
          updated_at: clock(),
        })
        .where('id', '=', id)
        .where('bot_token', 'is not', null)
        .where('bot_token_expires_at', '=', expiresAt * 1000)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async summaryOf(id) {
      return (await summariesOf([id])).get(id);
    },

    summariesOf,

    async paymentKeyOf(id) {
      const row = await db
        .selectFrom('installations')
        .select(['id', 'payment_api_key'])
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? (await open(row, ['payment_api_key'])).payment_api_key : undefined;
    },

    async connectPaymentKey(id, apiKey, by, at) {
      await changeAccount(
        id,
        {
          payment_api_key: seal(id, 'payment_api_key', apiKey),
          payment_key_connected_by: by,
          payment_key_connected_at: at,
          updated_at: at,
        },
        // A Replace key: its watches go on, but an invoice the new account does not know ends
        // them for that reason (src/watches/checks.ts).
        (trx) =>
          trx
            .updateTable('watched_invoices')
            .set({ account_replaced: 1 })
            .where('installation_id', '=', id)
            .execute(),
      );
    },

    async disconnectPaymentKey(id, at, within) {
      await changeAccount(
        id,
        {
          payment_api_key: null,
          payment_key_connected_by: null,
          payment_key_connected_at: null,
          updated_at: at,
        },
        within,
      );
    },

    async forgetBotToken(id) {
      await db
        .updateTable('installations')
        .set({ bot_token: null, bot_refresh_token: null, bot_token_expires_at: null, updated_at: clock() })
        .where('id', '=', id)
        .execute();
    },
  };
}
