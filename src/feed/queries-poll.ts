import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import { leasing, nextFreeAt, type Queue, releaseHeld } from '../runner/leases.js';
import type { Store } from '../store/database.js';
import type { InstallationId } from '../store/keys.js';
import type { Tables } from '../store/schema.js';

/** The balance poll's row: one per installation, however many instances run. */
export type PollRow = Selectable<Tables['singletons']>;

const BALANCE_POLL = 'balance_poll';

/** The balance polls as the runner leases them: one an installation, due at `next_run_at`. */
export const POLLS: Queue<'singletons'> = {
  table: 'singletons',
  key: ['installation_id', 'name'],
  due: 'next_run_at',
};

/** A poll whose installation has a feed running: the first feed starts it, and it rests once the last ends. */
const withFeed = ({ exists, selectFrom }: ExpressionBuilder<Tables, 'singletons'>) =>
  exists(
    selectFrom('feed_subscriptions as f')
      .select('f.id')
      .whereRef('f.installation_id', '=', 'singletons.installation_id')
      .where('f.state', '=', 'active'),
  );

/** Leases the due polls of installations with a feed, the longest overdue first. */
const leasePolls = leasing(POLLS, 'singletons', (db, { now, limit }: { now: number; limit: number }) =>
  db
    .selectFrom('singletons')
    .select(['installation_id', 'name'])
    .where('name', '=', BALANCE_POLL)
    .where('next_run_at', '<=', now)
    .where(withFeed)
    .orderBy('next_run_at')
    .limit(limit),
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
          last_success_at: lastSuccessAt,
        })
        .onConflict((oc) => oc.columns(['installation_id', 'name']).doNothing())
        .execute();
    },

    /** When the balance was last read successfully by the poll, if ever. */
    pollSucceededAt: async (trx: Kysely<Tables>) =>
      (await polls(trx).select('last_success_at').executeTakeFirst())?.last_success_at,

    /** Records the poll's next run and releases its lease, only while `owner` holds it; else LeaseLost. */
    releasePoll: (trx: Kysely<Tables>, owner: string, values: Partial<PollRow>): Promise<void> =>
      releaseHeld(trx, POLLS, { installation_id: installation, name: BALANCE_POLL }, owner, values),
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
    nextPollDueAt: (now: number) =>
      nextFreeAt(POLLS, db.selectFrom('singletons').where('name', '=', BALANCE_POLL).where(withFeed), now),

    /**
     * Takes up to `limit` due polls of installations with a feed, the longest overdue first,
     * leased to `owner` until `now + leaseMs`: each installation's balance is read by one
     * instance at a time.
     */
    claimPolls: async (owner: string, now: number, limit: number, leaseMs: number): Promise<PollRow[]> =>
      (await leasePolls(db, { now, limit }, { owner, until: now + leaseMs }, now)).sort(
        (a, b) => a.next_run_at - b.next_run_at,
      ),
  };
}
