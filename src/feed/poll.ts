import type { StoredBalance } from '../domain/balance.js';
import { type BalanceEntry, InvalidApiKeyError, isPaymentError } from '../payments/index.js';
import type { Tracked } from '../pipeline/tracked.js';
import { leaseOf } from '../runner/leases.js';
import type { BackgroundDeps } from '../scheduler.js';
import { KEY_PROBE_MS } from '../service-state.js';
import { keyRejectedNotice } from '../views/feed.js';
import { balanceChanges, toStored } from './deltas.js';
import type { FeedQueries, PollRow } from './queries.js';
import { postTuned } from './tuned-post.js';

/**
 * Balance readings and feed changes older than this are deleted (the digest looks back 24 h),
 * all but the newest reading: the next one is compared with it, however old.
 */
export const KEEP_HISTORY_MS = 8 * 24 * 3_600_000;
/** A held movement no post or digest has shown is kept this long, for the next post to fold in. */
const KEEP_UNSHOWN_HELD_MS = 4 * KEEP_HISTORY_MS;
/**
 * A reading more than this many poll intervals after the last successful one compares across a
 * gap (the bot was not running, the payment service did not answer, the key was rejected): its
 * message says the change happened somewhere in that span. A missed reading or two is not worth
 * saying.
 */
const GAP_INTERVALS = 3;

interface PollDeps extends BackgroundDeps {
  queries: FeedQueries;
  /** When the account whose key `payments` holds was connected (many workspaces). */
  account?: number | undefined;
  /** How often the balance is read (BALANCE_POLL_SECONDS). */
  pollMs: number;
}

/**
 * An installation's balance poll (claimed by `feedPollJob`): one reading every interval, by one
 * instance however many run, while any of its channels subscribes. What moved since the last
 * reading is posted to every one of its feed channels; the reading, the changes and their
 * messages are one transaction, so a change is posted once.
 */
export function balancePoll(deps: PollDeps): (row: PollRow) => Promise<Tracked> {
  const { store, payments, state, clock, queries, pollMs } = deps;

  return async function poll(row: PollRow): Promise<Tracked> {
    const now = clock();
    let entries: readonly BalanceEntry[];
    try {
      entries = await payments.getBalance({ background: true });
    } catch (error) {
      if (!isPaymentError(error)) throw error;
      const rejected = error instanceof InvalidApiKeyError;
      if (rejected) await state.markKeyRejected(now);
      await store.transaction(async (trx) => {
        await queries.releasePoll(trx, leaseOf(row), {
          next_run_at: now + (rejected ? KEY_PROBE_MS : pollMs),
        });
        if (!rejected) return;
        // Said once in each feed channel, not every minute.
        const unaware = (await queries.active(trx)).filter((s) => s.key_notice_at === null);
        await queries.enqueueTo(trx, unaware, keyRejectedNotice(state.keySource), now);
        await queries.markKeyNoticed(trx, unaware, now);
      });
      deps.wakeOutbox?.();
      return rejected ? { outcome: 'paused' } : { outcome: error.code };
    }
    await state.markKeyAccepted();

    const current = toStored(entries);
    const announced = await store.transaction(async (trx) => {
      await queries.releasePoll(trx, leaseOf(row), { next_run_at: now + pollMs, last_success_at: now });
      // A reading of the account before a Replace key or Disconnect that committed meanwhile
      // is no reading of this one: compared with the new account's, it would look like a payment.
      if (!(await queries.readsAccount(trx, deps.account))) return undefined;
      await queries.clearKeyNotices(trx);
      await queries.pruneHistory(trx, now - KEEP_HISTORY_MS);
      await queries.pruneHeld(trx, { shown: now - KEEP_HISTORY_MS, any: now - KEEP_UNSHOWN_HELD_MS });
      await queries.paid.prune(trx, now - KEEP_HISTORY_MS);
      const latest = await queries.latestReading(trx);
      if (!latest) {
        // The first reading (of the feed, or since a Replace key) is the baseline: nothing moved yet.
        await queries.insertReading(trx, now, current);
        return 0;
      }
      const changes = balanceChanges(JSON.parse(latest.balances) as StoredBalance, current);
      if (changes.length === 0) return 0;
      await queries.insertReading(trx, now, current);
      await queries.insertChanges(trx, now, changes);
      // The balance was last seen as `latest` at its reading or at the last successful poll since
      // (a reading is stored only when the balance moved).
      const since = Math.max(latest.taken_at, row.last_success_at ?? latest.taken_at);
      const gap = now - since > GAP_INTERVALS * pollMs ? new Date(since) : undefined;
      await postTuned(trx, queries, changes, now, gap);
      return changes.length;
    });
    if (announced === undefined) return { outcome: 'account_changed' };
    if (announced > 0) deps.wakeOutbox?.();
    return {
      outcome: announced > 0 ? 'changed' : 'unchanged',
      quiet: announced === 0,
      counts: { currencies: announced },
    };
  };
}
