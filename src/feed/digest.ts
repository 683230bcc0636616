import type { StoredBalance } from '../domain/balance.js';
import type { Tracked } from '../pipeline/tracked.js';
import { leaseOf } from '../runner/leases.js';
import type { BackgroundDeps } from '../scheduler.js';
import { coinTrends, pointTimes } from '../views/charts.js';
import { TREND_DAYS } from '../views/digest-charts.js';
import { digestMessage } from '../views/feed.js';
import { withPaidInvoices } from '../views/paid-invoices.js';
import { digestOf, type FeedQueries, type SubscriptionRow } from './queries.js';
import { nextDigestAt } from './schedule.js';

const DAY_MS = 24 * 3_600_000;
/** A digest more than this late (the bot was down at its time) is skipped, not sent. */
const LATE_DIGEST_LIMIT_MS = 12 * 3_600_000;
/** A digest this late or later is marked late. */
const LATE_MARK_MS = 5 * 60_000;

interface DigestDeps extends BackgroundDeps {
  queries: FeedQueries;
}

/**
 * A subscription's daily digest (claimed by `feedDigestJob`): once a day at each channel's local time, the balance as last read, how it
 * changed over 24 hours, and how many rises and falls the feed announced. Moving the next digest
 * on and queueing this one are one transaction, so it goes out once.
 */
export function dailyDigest(deps: DigestDeps): (sub: SubscriptionRow) => Promise<Tracked> {
  const { store, logger, clock, queries } = deps;

  return async function digest(sub: SubscriptionRow): Promise<Tracked> {
    const now = clock();
    const lateBy = now - sub.next_digest_at;
    const next = nextDigestAt(digestOf(sub), now);
    const sent = await store.transaction(async (trx) => {
      await queries.rescheduleDigest(trx, leaseOf(sub), sub.id, next);
      if (lateBy >= LATE_DIGEST_LIMIT_MS) return false;
      const latest = await queries.latestReading(trx);
      if (!latest) return false;
      const dayAgo = (await queries.latestReading(trx, now - DAY_MS)) ?? (await queries.oldestReading(trx));
      const { rises, falls } = await queries.changeCounts(trx, now - DAY_MS);
      const moved = await queries.movedCurrencies(trx, now - DAY_MS);
      const readAt = (await queries.pollSucceededAt(trx)) ?? latest.taken_at;
      const times = pointTimes(now, TREND_DAYS);
      const inForce = await queries.readingsAt(trx, times);
      const message = digestMessage({
        balances: JSON.parse(latest.balances) as StoredBalance,
        asOf: new Date(readAt),
        before:
          dayAgo && dayAgo.id !== latest.id ? (JSON.parse(dayAgo.balances) as StoredBalance) : undefined,
        beforeAt: dayAgo && dayAgo.id !== latest.id ? new Date(dayAgo.taken_at) : undefined,
        rises,
        falls,
        moved,
        lateByMs: lateBy >= LATE_MARK_MS ? lateBy : undefined,
        trends: coinTrends(times, inForce),
      });
      // The invoices paid in the period that were watched or looked up in this channel (docs/feed.md).
      const paid = await queries.paid.forDigest(trx, sub.channel_id, now - DAY_MS);
      await queries.enqueueTo(trx, [sub], withPaidInvoices(message, paid), now);
      return true;
    });
    if (!sent) {
      if (lateBy >= LATE_DIGEST_LIMIT_MS) {
        logger.warn(
          { channel: sub.channel_id, lateMinutes: Math.round(lateBy / 60_000) },
          'a digest more than 12 hours late was skipped',
        );
      }
      return { outcome: 'unchanged', quiet: true };
    }
    deps.wakeOutbox?.();
    return { outcome: 'sent' };
  };
}
