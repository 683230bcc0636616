import type { Kysely } from 'kysely';
import type { BalanceChange, StoredBalance } from '../domain/balance.js';
import type { InstallationId } from '../store/keys.js';
import type { Tables } from '../store/schema.js';
import type { KeptReading } from '../views/charts.js';

/**
 * Where the feed changes a digest counts start: after the one the database numbered `afterId`
 * (the last one the previous digest counted) or, for a feed's first digest, after the time `since`.
 */
export type ChangeStart = { afterId: number } | { since: number };
/** The changes a digest counts: from its start to `upTo`, the last one numbered when it read the balance. */
export type ChangeWindow = ChangeStart & { upTo: number };

/** The installation's balance readings. */
const readings = (trx: Kysely<Tables>, installation: InstallationId) =>
  trx.selectFrom('balance_history').selectAll().where('installation_id', '=', installation);

/** The installation's feed changes in `window`. */
const changesIn = (trx: Kysely<Tables>, installation: InstallationId, window: ChangeWindow) =>
  trx
    .selectFrom('feed_changes')
    .where('installation_id', '=', installation)
    .where('id', '<=', window.upTo)
    .where((eb) => ('afterId' in window ? eb('id', '>', window.afterId) : eb('at', '>', window.since)));

/**
 * The balance's history: the readings the poll stored (one each time the balance moved), and
 * which way each currency moved, for the digest.
 */
export function historyQueries(installation: InstallationId) {
  return {
    /**
     * The last reading stored, or the last one stored of those taken at or before `atOrBefore`.
     * "Last" is the database's numbering, never `taken_at`: that is the clock of the instance
     * that took it, and a clock stepped back, or an instance whose clock is ahead of another's,
     * would make an older reading look newer and its payments announced again at every poll.
     */
    latestReading: (trx: Kysely<Tables>, atOrBefore?: number) =>
      readings(trx, installation)
        .$if(atOrBefore !== undefined, (q) => q.where('taken_at', '<=', atOrBefore ?? 0))
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst(),

    /**
     * The reading in force at each of `times` (the last stored, by the database's numbering, of
     * those taken at or before it), in one statement: a week's chart reads a handful of rows,
     * however many readings were kept. A time before the first reading has none.
     */
    async readingsAt(trx: Kysely<Tables>, times: readonly number[]): Promise<(KeptReading | undefined)[]> {
      if (times.length === 0) return [];
      const rows = await readings(trx, installation)
        .where((eb) =>
          eb.or(
            times.map((at) =>
              eb(
                'id',
                '=',
                eb
                  .selectFrom('balance_history as kept')
                  .select((k) => k.fn.max('kept.id').as('id'))
                  .where('kept.installation_id', '=', installation)
                  .where('kept.taken_at', '<=', at),
              ),
            ),
          ),
        )
        .execute();
      const kept = rows
        .sort((a, b) => b.id - a.id)
        .map((r) => ({ id: r.id, takenAt: r.taken_at, balances: JSON.parse(r.balances) as StoredBalance }));
      return times.map((at) => kept.find((r) => r.takenAt <= at));
    },

    /**
     * What a digest shows and counts up to, read in one statement (one snapshot, while a poll may
     * be storing the next reading): the last reading stored and the last change numbered (0 when
     * there is none).
     */
    async digestPoint(trx: Kysely<Tables>) {
      const row = await readings(trx, installation)
        .selectAll()
        .select((eb) =>
          eb
            .selectFrom('feed_changes')
            .select((c) => c.fn.max('feed_changes.id').as('upTo'))
            .where('feed_changes.installation_id', '=', installation)
            .as('changes_up_to'),
        )
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row && { ...row, changes_up_to: Number(row.changes_up_to ?? 0) };
    },

    /** The reading the database numbered `id`, unless it was pruned or forgotten since. */
    readingById: (trx: Kysely<Tables>, id: number) =>
      readings(trx, installation).where('id', '=', id).executeTakeFirst(),

    oldestReading: (trx: Kysely<Tables>) =>
      readings(trx, installation).orderBy('id').limit(1).executeTakeFirst(),

    async insertReading(trx: Kysely<Tables>, takenAt: number, balances: StoredBalance): Promise<void> {
      await trx
        .insertInto('balance_history')
        .values({ installation_id: installation, taken_at: takenAt, balances: JSON.stringify(balances) })
        .execute();
    },

    /** Records which way each currency moved, for the digest's counts. */
    async insertChanges(trx: Kysely<Tables>, at: number, changes: readonly BalanceChange[]): Promise<void> {
      await trx
        .insertInto('feed_changes')
        .values(
          changes.map((c) => ({
            installation_id: installation,
            at,
            currency: c.currency,
            direction: c.delta.sign() > 0 ? 'rise' : 'fall',
          })),
        )
        .execute();
    },

    /** The currencies whose balance moved in `window`: the digest lists them even back at 0. */
    async movedCurrencies(trx: Kysely<Tables>, window: ChangeWindow): Promise<ReadonlySet<string>> {
      const rows = await changesIn(trx, installation, window).select('currency').distinct().execute();
      return new Set(rows.map((r) => r.currency));
    },

    /** How many rises and falls were announced in `window`, of `coins` only when a channel chose some. */
    async changeCounts(
      trx: Kysely<Tables>,
      window: ChangeWindow,
      coins: readonly string[] | null = null,
    ): Promise<{ rises: number; falls: number }> {
      const counts = await changesIn(trx, installation, window)
        .select(['direction', (eb) => eb.fn.countAll<number>().as('n')])
        .$if(coins !== null && coins.length > 0, (q) => q.where('currency', 'in', coins ?? []))
        .groupBy('direction')
        .execute();
      const count = (direction: 'rise' | 'fall') =>
        Number(counts.find((c) => c.direction === direction)?.n ?? 0);
      return { rises: count('rise'), falls: count('fall') };
    },

    /**
     * Deletes the readings and the changes from before `before`, never the newest reading: it is
     * what the next one is compared with, however long the balance has not moved (a reading is
     * stored only when it did).
     */
    async pruneHistory(trx: Kysely<Tables>, before: number): Promise<void> {
      await trx
        .deleteFrom('balance_history')
        .where('installation_id', '=', installation)
        .where('taken_at', '<', before)
        .where('id', 'not in', (eb) =>
          eb
            .selectFrom('balance_history as newest')
            .select('newest.id')
            .where('newest.installation_id', '=', installation)
            .orderBy('newest.id', 'desc')
            .limit(1),
        )
        .execute();
      await trx
        .deleteFrom('feed_changes')
        .where('installation_id', '=', installation)
        .where('at', '<', before)
        .execute();
    },
  };
}
