import type { Installation, InstallationQuery, InstallationStore } from '@slack/bolt';
import { type Kysely, sql } from 'kysely';
import type { Store } from './database.js';
import type { Tables } from './schema.js';
import { type Sealer, SealingError } from './sealing.js';

/**
 * The installations of the app in many-workspaces mode, on the bot's own store (both dialects),
 * as `@slack/oauth`'s `InstallationStore`: what Bolt's `authorize` reads on every request and
 * what the OAuth redirect writes. Secrets are sealed here, at the store's boundary: nothing above
 * sees ciphertext, nothing below sees plain text.
 */
export interface Installations extends Required<InstallationStore> {
  /** `tokens_revoked`: the bot token is forgotten; the row stays until `app_uninstalled`. */
  forgetBotToken(id: string): Promise<void>;
  /** Who installed the app there, and whether its payment account is connected: no secret. */
  summaryOf(id: string): Promise<InstallationSummary | undefined>;
  /** The installation's payment service API key, opened; undefined while none is connected. */
  paymentKeyOf(id: string): Promise<string | undefined>;
  /** Stores the workspace's payment service API key, sealed, replacing any before it. */
  connectPaymentKey(id: string, apiKey: string, by: string, at: number): Promise<void>;
  disconnectPaymentKey(id: string, at: number): Promise<void>;
}

export interface InstallationSummary {
  id: string;
  /** The workspace, or for an organisation-wide install the organisation, whose people it serves. */
  home: { teamId: string; enterpriseId: string | undefined };
  /** Installed for a whole Enterprise Grid organisation (stored by its enterprise id). */
  enterpriseInstall: boolean;
  installerUserId: string;
  /** Who connected the payment account and when; undefined while none is connected. */
  account: { connectedBy: string; connectedAt: number } | undefined;
  /** When the bot token expires (milliseconds since the epoch), with token rotation. */
  tokenExpiresAt: number | undefined;
}

type Row = Tables['installations'];
/** An account's balance readings and the changes the feed counted: they compare one account with itself only. */
const FEED_HISTORY = ['balance_history', 'feed_changes'] as const;
/** The rest of what is an installation's own, besides its row. */
const OWN_WORK = [
  'watches',
  'watched_invoices',
  'feed_subscriptions',
  'singletons',
  'outbox',
  'background_pace',
] as const;
type Secret = 'bot_token' | 'bot_refresh_token' | 'payment_api_key';
const SECRETS: readonly Secret[] = ['bot_token', 'bot_refresh_token', 'payment_api_key'];

/** What each sealed value is bound to: a value copied into another installation's row does not open. */
const contextOf = (id: string, column: Secret) => `installation:${id}:${column}`;

/** The row an installation or a request belongs to: the organisation for an organisation-wide install. */
export function installationId(query: {
  teamId?: string | undefined;
  enterpriseId?: string | undefined;
  isEnterpriseInstall?: boolean | undefined;
}): string | undefined {
  return query.isEnterpriseInstall && query.enterpriseId ? query.enterpriseId : query.teamId;
}

/** No installation for a request's workspace (never installed, uninstalled, or its token revoked). */
export class NoInstallationError extends Error {
  override readonly name = 'NoInstallationError';
}

export function createInstallations(store: Store, sealer: Sealer, clock: () => number): Installations {
  const { db } = store;
  const seal = (id: string, column: Secret, value: string | undefined) =>
    value === undefined ? null : sealer.seal(value, contextOf(id, column));

  /** Opens a row's secrets; those sealed with the previous key are sealed again with the current one. */
  async function open(row: Row): Promise<Record<Secret, string | undefined>> {
    const opened = {} as Record<Secret, string | undefined>;
    const resealed: Partial<Record<Secret, string>> = {};
    for (const column of SECRETS) {
      const sealed = row[column];
      if (sealed === null) continue;
      const { plaintext, stale } = sealer.open(sealed, contextOf(row.id, column));
      opened[column] = plaintext;
      if (stale) resealed[column] = sealer.seal(plaintext, contextOf(row.id, column));
    }
    if (Object.keys(resealed).length > 0) {
      // Only if the row is still the one opened: a newer write keeps its own values.
      await db
        .updateTable('installations')
        .set(resealed)
        .where('id', '=', row.id)
        .where('updated_at', '=', row.updated_at)
        .execute();
    }
    return opened;
  }

  /**
   * Connects, replaces or disconnects the payment account. The readings of the one before go
   * with it, in the same transaction: the feed never announces the difference between two
   * accounts' balances as a payment, and starts again from the new account's first reading.
   */
  const changeAccount = (id: string, values: Partial<Row>) =>
    store.transaction(async (trx) => {
      await trx.updateTable('installations').set(values).where('id', '=', id).execute();
      for (const table of FEED_HISTORY)
        await trx.deleteFrom(table).where('installation_id', '=', id).execute();
    });

  return {
    async storeInstallation(installation) {
      const id = installationId({
        teamId: installation.team?.id,
        enterpriseId: installation.enterprise?.id,
        isEnterpriseInstall: installation.isEnterpriseInstall,
      });
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
        installer_user_id: installation.user.id,
        updated_at: now,
      };
      // Installing again (or a refreshed token) keeps the connected payment account.
      await db
        .insertInto('installations')
        .values({ id, ...values, created_at: now })
        .onConflict((oc) => oc.column('id').doUpdateSet(values))
        .execute();
    },

    async fetchInstallation(query) {
      const id = installationId(query);
      const row = id
        ? await db.selectFrom('installations').selectAll().where('id', '=', id).executeTakeFirst()
        : undefined;
      if (!row || row.bot_token === null) {
        throw new NoInstallationError(`no installation for ${id ?? 'a request without a workspace'}`);
      }
      const secrets = await open(row);
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
      const id = installationId(query);
      if (!id) return;
      await store.transaction(async (trx) => {
        for (const table of [...FEED_HISTORY, ...OWN_WORK] as const)
          await trx.deleteFrom(table).where('installation_id', '=', id).execute();
        await trx.deleteFrom('installations').where('id', '=', id).execute();
      });
    },

    async summaryOf(id) {
      const row = await db
        .selectFrom('installations')
        .select([
          'team_id',
          'enterprise_id',
          'is_enterprise_install',
          'installer_user_id',
          'payment_api_key',
          'payment_key_connected_by',
          'payment_key_connected_at',
          'bot_token_expires_at',
        ])
        .where('id', '=', id)
        .executeTakeFirst();
      if (!row) return undefined;
      const connected = row.payment_api_key !== null && row.payment_key_connected_by !== null;
      const enterpriseId = row.enterprise_id ?? undefined;
      return {
        id,
        home: { teamId: row.team_id ?? enterpriseId ?? id, enterpriseId },
        enterpriseInstall: row.is_enterprise_install === 1,
        installerUserId: row.installer_user_id,
        account: connected
          ? {
              connectedBy: row.payment_key_connected_by as string,
              connectedAt: Number(row.payment_key_connected_at),
            }
          : undefined,
        tokenExpiresAt: row.bot_token_expires_at === null ? undefined : Number(row.bot_token_expires_at),
      };
    },

    async paymentKeyOf(id) {
      const row = await db.selectFrom('installations').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? (await open(row)).payment_api_key : undefined;
    },

    async connectPaymentKey(id, apiKey, by, at) {
      await changeAccount(id, {
        payment_api_key: seal(id, 'payment_api_key', apiKey),
        payment_key_connected_by: by,
        payment_key_connected_at: at,
        updated_at: at,
      });
    },

    async disconnectPaymentKey(id, at) {
      await changeAccount(id, {
        payment_api_key: null,
        payment_key_connected_by: null,
        payment_key_connected_at: null,
        updated_at: at,
      });
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

/**
 * Runs `work` (a token refresh) while no other instance refreshes the same installation's token:
 * Slack hands out two tokens to two refreshes of one refresh token, and one of them is invalid
 * (node-slack-sdk #2504). On PostgreSQL a transaction-scoped advisory lock on the installation;
 * a SQLite store is one process, whose caller refreshes each installation once at a time.
 */
export async function refreshingAlone<T>(store: Store, id: string, work: () => Promise<T>): Promise<T> {
  if (store.dialect !== 'postgres') return work();
  return store.transaction(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`installation:${id}:refresh`}, 0))`.execute(
      trx,
    );
    return work();
  });
}

const CANARY_KEY = 'sealing_canary';
const CANARY_CONTEXT = `service_state:${CANARY_KEY}`;

/** ENCRYPTION_KEY does not open what the store holds: the start stops, nothing changed. */
export class SealingKeyError extends Error {
  override readonly name = 'SealingKeyError';
}

/**
 * Checks at start that ENCRYPTION_KEY opens the store's secrets, by a value sealed the first
 * time (a canary). A wrong key stops the start and changes nothing; the right key works again
 * afterwards. After a rotation (the canary opens with ENCRYPTION_KEY_PREVIOUS) every secret is
 * sealed again with the new key, in one transaction, so the previous key can then be dropped.
 */
export async function prepareSealing(store: Store, sealer: Sealer, now: number): Promise<void> {
  const canary = await store.db
    .selectFrom('service_state')
    .select('value')
    .where('key', '=', CANARY_KEY)
    .executeTakeFirst();
  if (!canary) {
    await store.db
      .insertInto('service_state')
      .values({ key: CANARY_KEY, value: sealer.seal(CANARY_KEY, CANARY_CONTEXT), updated_at: now })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    return;
  }
  let stale: boolean;
  try {
    stale = sealer.open(canary.value, CANARY_CONTEXT).stale;
  } catch (error) {
    if (!(error instanceof SealingError)) throw error;
    const sealedWith = canary.value.split('.')[1] ?? 'unknown';
    throw new SealingKeyError(
      `ENCRYPTION_KEY (key ${sealer.keyId}) does not open the secrets in the store, sealed with key ${sealedWith}: set ENCRYPTION_KEY back to that key, or to change keys put it in ENCRYPTION_KEY_PREVIOUS. Nothing was changed.`,
      { cause: error },
    );
  }
  if (stale) await resealAll(store, sealer, now);
}

async function resealAll(store: Store, sealer: Sealer, now: number): Promise<void> {
  await store.transaction(async (trx: Kysely<Tables>) => {
    const rows = await trx.selectFrom('installations').selectAll().execute();
    for (const row of rows) {
      const values: Partial<Record<Secret, string>> = {};
      for (const column of SECRETS) {
        const sealed = row[column];
        if (sealed === null) continue;
        const context = contextOf(row.id, column);
        values[column] = sealer.seal(sealer.open(sealed, context).plaintext, context);
      }
      if (Object.keys(values).length > 0)
        await trx.updateTable('installations').set(values).where('id', '=', row.id).execute();
    }
    await trx
      .updateTable('service_state')
      .set({ value: sealer.seal(CANARY_KEY, CANARY_CONTEXT), updated_at: now })
      .where('key', '=', CANARY_KEY)
      .execute();
  });
}
