import type { Kysely } from 'kysely';
import type { StoredBalance } from '../domain/balance.js';
import type { FeedSettings } from '../domain/feed-settings.js';
import type { Tracked } from '../pipeline/tracked.js';
import { leaseOf } from '../runner/leases.js';
import type { BackgroundDeps } from '../scheduler.js';
import type { Tables } from '../store/schema.js';
import type { Message } from '../views/blocks.js';
import { coinTrends, pointTimes } from '../views/charts.js';
import { TREND_DAYS } from '../views/digest-charts.js';
import { digestMessage } from '../views/feed.js';
import { HELD_IN_PERIOD, sumHeld, withHeld } from '../views/feed-settings.js';
import { withPaidInvoices } from '../views/paid-invoices.js';
import { digestOf, type FeedQueries, type SubscriptionRow } from './queries.js';
import type { ChangeStart } from './queries-history.js';
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

/** Where a digest's changes start: the reading it compares with, the changes it counts, and what it says of them. */
interface DigestStart {
  before: Reading | undefined;
  changes: ChangeStart;
  since?: { at: Date; from: 'last digest' | 'oldest kept' };
}

type Reading = NonNullable<Awaited<ReturnType<FeedQueries['oldestReading']>>>;

/**
 * Where the digest of `sub` starts: where the last digest sent stopped (the reading it showed,
 * the last change it counted, both as the database numbered them), so consecutive digests tile
 * time whether one was late, skipped, off or moved; for a feed's first digest, a day or a week
 * back (`periodStart`), or since the feed began.
 */
async function digestStart(
  trx: Kysely<Tables>,
  queries: FeedQueries,
  sub: SubscriptionRow,
  periodStart: number,
): Promise<DigestStart> {
  if (sub.last_digest_as_of === null || sub.last_digest_reading_id === null)
    return {
      before: (await queries.latestReading(trx, periodStart)) ?? (await queries.oldestReading(trx)),
      changes: { since: periodStart },
    };
  const changes = { afterId: sub.last_digest_change_id ?? 0 };
  const shown = await queries.readingById(trx, sub.last_digest_reading_id);
  if (shown)
    return { before: shown, changes, since: { at: new Date(sub.last_digest_as_of), from: 'last digest' } };
  // Pruned (the digest was off longer than readings are kept) or forgotten with a replaced key.
  const oldest = await queries.oldestReading(trx);
  return {
    before: oldest,
    changes,
    ...(oldest ? { since: { at: new Date(oldest.taken_at), from: 'oldest kept' } } : {}),
  };
}

/**
 * The digest of `sub` as it goes out now, with everything it names marked named, or none when
 * the feed has no reading to show.
 */
async function composeDigest(
  trx: Kysely<Tables>,
  queries: FeedQueries,
  sub: SubscriptionRow,
  settings: FeedSettings,
  now: number,
  lateBy: number,
): Promise<Message | undefined> {
  const latest = await queries.digestPoint(trx);
  if (!latest) return undefined;
  const weekly = settings.digest === 'weekly';
  const start = await digestStart(trx, queries, sub, now - (weekly ? WEEK_MS : DAY_MS));
  const window = { ...start.changes, upTo: latest.changes_up_to };
  const { rises, falls } = await queries.changeCounts(trx, window, settings.coins);
  const moved = await queries.movedCurrencies(trx, window);
  const readAt = (await queries.pollSucceededAt(trx)) ?? latest.taken_at;
  const before = start.before && start.before.id !== latest.id ? start.before : undefined;
  const times = pointTimes(now, TREND_DAYS);
  const inForce = await queries.readingsAt(trx, times);
  const message = digestMessage({
    balances: onlyChosen(JSON.parse(latest.balances) as StoredBalance, settings),
    asOf: new Date(readAt),
    before: before && onlyChosen(JSON.parse(before.balances) as StoredBalance, settings),
    beforeAt: before && new Date(before.taken_at),
    since: start.since,
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
  const held = sumHeld(await queries.takeHeld(trx, sub.id));
  // The invoices watched or looked up in this channel, paid since the feed began, that no digest named (docs/feed.md).
  const paid = await queries.paid.forDigest(trx, sub.channel_id, sub.created_at);
  await queries.markDigestSent(trx, sub.id, {
    readingId: latest.id,
    changeId: latest.changes_up_to,
    asOf: readAt,
  });
  return withPaidInvoices(withHeld(message, held, HELD_IN_PERIOD), paid);
}

/**
 * A subscription's digest (claimed by `feedDigestJob`): once a day, or once a week on the day its
 * channel chose, at the channel's local time, the balance of its coins as last read, how it
 * changed since the last digest sent, how many rises and falls the feed announced since, and the
 * exact sums its minimums held and the invoices paid that no digest named yet; none while the
 * channel turned it off. Moving the next digest on, queueing this one and marking what it named
 * are one transaction, so it goes out once and names each thing once.
 */
export function dailyDigest(deps: DigestDeps): (sub: SubscriptionRow) => Promise<Tracked> {
  const { store, logger, clock, queries } = deps;

  return async function digest(sub: SubscriptionRow): Promise<Tracked> {
    const now = clock();
    const lateBy = now - sub.next_digest_at;
    const sent = await store.transaction(async (trx) => {
      const { settings } = (await queries.settingsOf(trx, [sub.id])).get(sub.id) ?? DEFAULT_SAVED;
      const next = nextDigestAt(
        digestOf(sub),
        now,
        settings.digest === 'weekly' ? settings.weekday : undefined,
      );
      await queries.rescheduleDigest(trx, leaseOf(sub), sub.id, next);
      // Off or skipped, it marks nothing: the next digest sent names what this one would have.
      if (settings.digest === 'off' || lateBy >= LATE_DIGEST_LIMIT_MS) return false;
      const message = await composeDigest(trx, queries, sub, settings, now, lateBy);
      if (!message) return false;
      await queries.enqueueTo(trx, [sub], message, now);
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
