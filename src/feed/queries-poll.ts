import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import type { Store } from '../store/database.js';
import type { InstallationId } from '../store/keys.js';
import { LeaseLost, leaseFree } from '../store/lease.js';
import type { Tables } from '../store/schema.js';

/** The balance poll's row: one per installation, however many instances run. */
export type PollRow = Selectable<Tables['singletons']>;

const BALANCE_POLL = 'balance_poll';

/** A poll whose installation has a feed running: the first feed starts it, and it rests once the last ends. */
const withFeed = ({ exists, selectFrom }: ExpressionBuilder<Tables, 'singletons'>) =>
  exists(
    selectFrom('feed_subscriptions as f')
      .select('f.id')
      .whereRef('f.installation_id', '=', 'singletons.installation_id')
      .where('f.state', '=', 'active'),
  );

/** An installation's balance poll: starting it with the first feed, and recording each run. */
export function pollQueries(installation: InstallationId) {
  const polls = (trx: Kysely<Tables>) =>
    trx.selectFrom('singletons').where('installation_id', '=', installation).where('name', '=', BALANCE_POLL);

  return {
    /** Creates the balance poll unless a feed already did: the first feed starts it. */
    async startPoll(trx: Kysely<Tables>, nextRunAt: number, lastSuccessAt: number): Promise<void> {
      await trx
        .insertInto('singletons')
        .values({
          installation_id: installation,
          name: BALANCE_POLL,
          next_run_at: nextRunAt,
          lease_owner: null,
          lease_until: null,
          last_success_at: lastSuccessAt,
        })
        .onConflict((oc) => oc.columns(['installation_id', 'name']).doNothing())
        .execute();
    },

    /** When the balance was last read successfully by the poll, if ever. */
    pollSucceededAt: async (trx: Kysely<Tables>) =>
      (await polls(trx).select('last_success_at').executeTakeFirst())?.last_success_at,

    /** Records the poll's next run and releases its lease, only while `owner` holds it; else LeaseLost. */
    async releasePoll(trx: Kysely<Tables>, owner: string, values: Partial<PollRow>): Promise<void> {
      const result = await trx
        .updateTable('singletons')
        .set({ ...values, lease_owner: null, lease_until: null })
        .where('installation_id', '=', installation)
        .where('name', '=', BALANCE_POLL)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) throw new LeaseLost();
    },
  };
}

/** The balance polls across installations: the scheduler's claims of due ones, and giving one back. */
export function pollClaims(store: Store) {
  const { db } = store;
  return {
    /**
     * When the next poll not leased to anyone falls due, of any installation with a feed (MIN gives
     * one row, its value null when nothing is due).
     */
    nextPollDueAt: async (now: number) =>
      (
        await db
          .selectFrom('singletons')
          .select((eb) => eb.fn.min<number>('next_run_at').as('next'))
          .where('name', '=', BALANCE_POLL)
          .where(leaseFree('lease_until', now))
          .where(withFeed)
          .executeTakeFirstOrThrow()
      ).next ?? undefined,

    /**
     * Takes up to `limit` due polls of installations with a feed, the longest overdue first,
     * leased to `owner` until `now + leaseMs`: each installation's balance is read by one
     * instance at a time.
     */
    claimPolls: async (owner: string, now: number, limit: number, leaseMs: number): Promise<PollRow[]> =>
      (
        await db
          .updateTable('singletons')
          .set({ lease_owner: owner, lease_until: now + leaseMs })
          .where('name', '=', BALANCE_POLL)
          .where('installation_id', 'in', (eb) =>
            eb
              .selectFrom('singletons')
              .select('installation_id')
              .where('name', '=', BALANCE_POLL)
              .where('next_run_at', '<=', now)
              .where(leaseFree('lease_until', now))
              .where(withFeed)
              .orderBy('next_run_at')
              .limit(limit)
              .$if(store.dialect === 'postgres', (q) => q.forUpdate().skipLocked()),
          )
          .returningAll()
          .execute()
      ).sort((a, b) => a.next_run_at - b.next_run_at),

    /** Gives a claimed poll back unread, due at `until`, only while `owner` holds its lease. */
    async postponePoll(owner: string, row: PollRow, until: number): Promise<void> {
      await db
        .updateTable('singletons')
        .set({ next_run_at: until, lease_owner: null, lease_until: null })
        .where('installation_id', '=', row.installation_id)
        .where('name', '=', BALANCE_POLL)
        .where('lease_owner', '=', owner)
        .execute();
    },
  };
}
