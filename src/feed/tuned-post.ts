import type { Kysely } from 'kysely';
import type { BalanceChange, StoredBalance } from '../domain/balance.js';
import type { FeedSettings } from '../domain/feed-settings.js';
import type { OutgoingEntry } from '../outbox.js';
import { Amount } from '../payments/index.js';
import type { Tables } from '../store/schema.js';
import { feedMessage } from '../views/feed.js';
import { condensedFeedMessage, HELD_SINCE_LAST_POST, sumHeld, withHeld } from '../views/feed-settings.js';
import { withPaidInvoices } from '../views/paid-invoices.js';
import type { FeedQueries } from './queries.js';
import { DEFAULT_SAVED } from './queries-settings.js';

/** The movements a channel's settings post now, and those they hold below the coin's minimum. */
function splitChanges(
  changes: readonly BalanceChange[],
  settings: FeedSettings,
): { post: BalanceChange[]; hold: BalanceChange[] } {
  const post: BalanceChange[] = [];
  const hold: BalanceChange[] = [];
  for (const c of changes) {
    if (settings.coins !== null && !settings.coins.includes(c.currency)) continue;
    const minimum = settings.minimums[c.currency];
    const below =
      minimum !== undefined &&
      c.delta
        .abs()
        .minus(Amount.parse(minimum) ?? Amount.ZERO)
        .sign() < 0;
    (below ? hold : post).push(c);
  }
  return { post, hold };
}

/** A reading's balances, only the coins a channel chose (all when it chose none). */
export const onlyChosen = (balances: StoredBalance, settings: FeedSettings): StoredBalance =>
  settings.coins === null
    ? balances
    : Object.fromEntries(Object.entries(balances).filter(([id]) => settings.coins?.includes(id)));

/**
 * Queues one reading's movements to every active feed as its channel tuned it: only its coins,
 * condensed or full, a movement below its coin's minimum held. A post shows, under its
 * movements, the exact sums of what was held since the last one (this reading's included); a
 * reading with nothing to post holds its movements for the next. All in the reading's
 * transaction, so each movement is posted or held once.
 */
export async function postTuned(
  trx: Kysely<Tables>,
  queries: FeedQueries,
  changes: readonly BalanceChange[],
  now: number,
  since: Date | undefined,
): Promise<void> {
  const subs = await queries.active(trx);
  const ids = subs.map((s) => s.id);
  const saved = await queries.settingsOf(trx, ids);
  const unposted = await queries.unposted(trx, ids);
  const entries: OutgoingEntry[] = [];
  const shown: number[] = [];
  const holds: { subscriptionId: string; currency: string; amount: string; posted: boolean }[] = [];
  for (const sub of subs) {
    const { settings } = saved.get(sub.id) ?? DEFAULT_SAVED;
    const { post, hold } = splitChanges(changes, settings);
    const posting = post.length > 0;
    const heldNow = hold.map((c) => ({ currency: c.currency, amount: c.delta.toString() }));
    holds.push(...heldNow.map((h) => ({ ...h, subscriptionId: sub.id, posted: posting })));
    if (!posting) continue;
    const earlier = unposted.filter((r) => r.subscription_id === sub.id);
    shown.push(...earlier.map((r) => r.id));
    const base =
      settings.style === 'condensed'
        ? condensedFeedMessage(post, new Date(now), since)
        : feedMessage(post, new Date(now), since);
    // Each channel's post names the paid invoices watched or looked up there (docs/feed.md).
    const paid = await queries.paid.forPost(trx, sub.channel_id, sub.created_at);
    const message = withPaidInvoices(
      withHeld(base, sumHeld([...earlier, ...heldNow]), HELD_SINCE_LAST_POST),
      paid,
    );
    entries.push({ channel: sub.channel_id, message, subscriptionId: sub.id });
  }
  await queries.hold(trx, holds, now);
  await queries.markPosted(trx, shown);
  await queries.tell(trx, entries, now);
}
