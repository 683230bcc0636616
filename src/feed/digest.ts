import type { StoredBalance } from '../domain/balance.js';
import type { Tracked } from '../pipeline/tracked.js';
import { leaseOf } from '../runner/leases.js';
import type { BackgroundDeps } from '../scheduler.js';
import { coinTrends, pointTimes } from '../views/charts.js';
import { TREND_DAYS } from '../views/digest-charts.js';
import { digestMessage } from '../views/feed.js';
import { HELD_IN_PERIOD, sumHeld, withHeld } from '../views/feed-settings.js';
import { withPaidInvoices } from '../views/paid-invoices.js';
import { digestOf, type FeedQueries, type SubscriptionRow } from './queries.js';
import { DEFAULT_SAVED } from './queries-settings.js';
import { nextDigestAt } from './schedule.js';
import { onlyChosen } from './tuned-post.js';

const DAY_MS = 24 * 3_600_000;
const WEEK_MS = 7 * DAY_MS;
/** A digest more than this late (the bot was down at its time) is skipped, not sent. */
const LATE_DIGEST_LIMIT_MS = 12 * 3_600_000;
/** A digest this late or later is marked late. */
const LATE_MARK_MS = 5 * 60_000;

interface DigestDeps extends BackgroundDeps {
  queries: FeedQueries;
}

/**
 * A subscription's digest (claimed by `feedDigestJob`): once a day, or once a week on the day its
 * channel chose, at the channel's local time, the balance of its coins as last read, how it
 * changed over the day or the week, how many rises and falls the feed announced, and the exact
 * sums its minimums held in that time; none while the channel turned it off. Moving the next
 * digest on and queueing this one are one transaction, so it goes out once.
 */
export function dailyDigest(deps: DigestDeps): (sub: SubscriptionRow) => Promise<Tracked> {
  const { store, logger, clock, queries } = deps;

  return async function digest(sub: SubscriptionRow): Promise<Tracked> {
    const now = clock();
    const lateBy = now - sub.next_digest_at;
    const sent = await store.transaction(async (trx) => {
      const { settings } = (await queries.settingsOf(trx, [sub.id])).get(sub.id) ?? DEFAULT_SAVED;
      const weekly = settings.digest === 'weekly';
      const next = nextDigestAt(digestOf(sub), now, weekly ? settings.weekday : undefined);
      await queries.rescheduleDigest(trx, leaseOf(sub), sub.id, next);
      if (settings.digest === 'off' || lateBy >= LATE_DIGEST_LIMIT_MS) return false;
      const latest = await queries.latestReading(trx);
      if (!latest) return false;
      const period = weekly ? WEEK_MS : DAY_MS;
      const start = (await queries.latestReading(trx, now - period)) ?? (await queries.oldestReading(trx));
      const { rises, falls } = await queries.changeCounts(trx, now - period, settings.coins);
      const moved = await queries.movedCurrencies(trx, now - period);
      const readAt = (await queries.pollSucceededAt(trx)) ?? latest.taken_at;
      const before = start && start.id !== latest.id ? start : undefined;
      const times = pointTimes(now, TREND_DAYS);
      const inForce = await queries.readingsAt(trx, times);
      const message = digestMessage({
        balances: onlyChosen(JSON.parse(latest.balances) as StoredBalance, settings),
        asOf: new Date(readAt),
        before: before && onlyChosen(JSON.parse(before.balances) as StoredBalance, settings),
        beforeAt: before && new Date(before.taken_at),
        rises,
        falls,
        moved,
        lateByMs: lateBy >= LATE_MARK_MS ? lateBy : undefined,
        // Only the coins the channel chose are charted, as only they are listed.
        trends: coinTrends(times, inForce).filter(
          (t) => settings.coins === null || settings.coins.includes(t.id),
        ),
        ...(weekly ? { period: 'week' as const } : {}),
      });
      const held = sumHeld(await queries.heldSince(trx, sub.id, now - period));
      // The invoices paid in the period that were watched or looked up in this channel (docs/feed.md).
      const paid = await queries.paid.forDigest(trx, sub.channel_id, now - period);
      await queries.enqueueTo(
        trx,
        [sub],
        withPaidInvoices(withHeld(message, held, HELD_IN_PERIOD), paid),
        now,
      );
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
