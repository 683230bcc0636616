import type { Kysely } from 'kysely';
import { DEFAULT_FEED_SETTINGS, type FeedSettings } from '../domain/feed-settings.js';
import type { InstallationId } from '../store/keys.js';
import type { Tables } from '../store/schema.js';

/** A feed's saved settings and the version they were saved as; version 0 is the defaults, never saved. */
export interface SavedSettings {
  settings: FeedSettings;
  version: number;
}

type SettingsRow = Tables['feed_settings'];

const fromRow = (
  row: Pick<SettingsRow, 'coins' | 'minimums' | 'style' | 'digest' | 'weekday' | 'version'>,
): SavedSettings => ({
  settings: {
    coins: row.coins === null ? null : (JSON.parse(row.coins) as string[]),
    minimums: JSON.parse(row.minimums) as Record<string, string>,
    style: row.style,
    digest: row.digest,
    weekday: row.weekday,
  },
  version: Number(row.version),
});

export const DEFAULT_SAVED: SavedSettings = { settings: DEFAULT_FEED_SETTINGS, version: 0 };

/** One held movement, numbered by the database in the order it was held. */
export interface HeldRow {
  id: number;
  subscription_id: string;
  currency: string;
  amount: string;
}

/**
 * An installation's feed settings and held movements: every query names the installation, so
 * another installation's feed is never read nor written.
 */
export function settingsQueries(installation: InstallationId) {
  const held = (trx: Kysely<Tables>) =>
    trx
      .selectFrom('feed_held')
      .select(['id', 'subscription_id', 'currency', 'amount'])
      .where('installation_id', '=', installation);
  /** Marks these held movements of the installation shown, in a post or in a digest. */
  async function markHeld(trx: Kysely<Tables>, ids: readonly number[], as: { posted: 1 } | { digested: 1 }) {
    if (ids.length === 0) return;
    await trx
      .updateTable('feed_held')
      .set(as)
      .where('installation_id', '=', installation)
      .where('id', 'in', ids)
      .execute();
  }

  return {
    /** The settings of each of these subscriptions, the defaults for one never saved. */
    async settingsOf(trx: Kysely<Tables>, ids: readonly string[]): Promise<Map<string, SavedSettings>> {
      const found = new Map<string, SavedSettings>(ids.map((id) => [id, DEFAULT_SAVED]));
      if (ids.length === 0) return found;
      const rows = await trx
        .selectFrom('feed_settings')
        .selectAll()
        .where('installation_id', '=', installation)
        .where('subscription_id', 'in', ids)
        .execute();
      for (const row of rows) found.set(row.subscription_id, fromRow(row));
      return found;
    },

    /**
     * Writes `settings` over the version read (`was`): false when another save came first (two
     * submissions racing, a retried one), so that save's changes are said once, by the one that won.
     */
    async writeSettings(
      trx: Kysely<Tables>,
      subscriptionId: string,
      settings: FeedSettings,
      was: number,
      now: number,
    ): Promise<boolean> {
      const values = {
        coins: settings.coins === null ? null : JSON.stringify(settings.coins),
        minimums: JSON.stringify(settings.minimums),
        style: settings.style,
        digest: settings.digest,
        weekday: settings.weekday,
        version: was + 1,
        updated_at: now,
      };
      if (was === 0) {
        const inserted = await trx
          .insertInto('feed_settings')
          .values({ ...values, subscription_id: subscriptionId, installation_id: installation })
          .onConflict((oc) => oc.column('subscription_id').doNothing())
          .executeTakeFirst();
        return Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0;
      }
      const updated = await trx
        .updateTable('feed_settings')
        .set(values)
        .where('installation_id', '=', installation)
        .where('subscription_id', '=', subscriptionId)
        .where('version', '=', was)
        .executeTakeFirst();
      return updated.numUpdatedRows > 0n;
    },

    /** Keeps movements below their channel's minimum, for the next post (unless this one shows them) and the digest. */
    async hold(
      trx: Kysely<Tables>,
      rows: readonly { subscriptionId: string; currency: string; amount: string; posted: boolean }[],
      now: number,
    ): Promise<void> {
      if (rows.length === 0) return;
      await trx
        .insertInto('feed_held')
        .values(
          rows.map((r) => ({
            installation_id: installation,
            subscription_id: r.subscriptionId,
            currency: r.currency,
            amount: r.amount,
            held_at: now,
            posted: r.posted ? 1 : 0,
          })),
        )
        .execute();
    },

    /** What no post has shown yet, of these subscriptions, in the order held. */
    unposted: (trx: Kysely<Tables>, ids: readonly string[]): Promise<HeldRow[]> =>
      ids.length === 0
        ? Promise.resolve([])
        : held(trx).where('subscription_id', 'in', ids).where('posted', '=', 0).orderBy('id').execute(),

    /** Marks held movements as shown in a post. */
    markPosted: (trx: Kysely<Tables>, ids: readonly number[]): Promise<void> =>
      markHeld(trx, ids, { posted: 1 }),

    /**
     * What a subscription held that no digest has shown yet, posted or not, in the order held,
     * marked shown in the same transaction as its digest is queued: each held movement is in one
     * digest, and what a skipped or turned-off digest did not take waits for the next one sent.
     */
    async takeHeld(trx: Kysely<Tables>, subscriptionId: string): Promise<HeldRow[]> {
      const rows = await held(trx)
        .where('subscription_id', '=', subscriptionId)
        .where('digested', '=', 0)
        .orderBy('id')
        .execute();
      await markHeld(
        trx,
        rows.map((r) => r.id),
        { digested: 1 },
      );
      return rows;
    },

    /**
     * Deletes held movements older than `shown` that a post or a digest has shown, and any older
     * than `any`: one neither shows (every movement below its minimum, the digest off) waits for
     * the next post that long, and the table stays bounded however long that is.
     */
    async pruneHeld(trx: Kysely<Tables>, before: { shown: number; any: number }): Promise<void> {
      await trx
        .deleteFrom('feed_held')
        .where('installation_id', '=', installation)
        .where((eb) =>
          eb.or([
            eb('held_at', '<', before.any),
            eb.and([eb('held_at', '<', before.shown), eb.or([eb('posted', '=', 1), eb('digested', '=', 1)])]),
          ]),
        )
        .execute();
    },

    /** A feed that ended takes its settings and held movements with it. */
    async forget(trx: Kysely<Tables>, subscriptionId: string): Promise<void> {
      for (const table of ['feed_settings', 'feed_held'] as const)
        await trx
          .deleteFrom(table)
          .where('installation_id', '=', installation)
          .where('subscription_id', '=', subscriptionId)
          .execute();
    },
  };
}
