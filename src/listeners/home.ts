import type { webApi } from '@slack/bolt';
import type { Refusal } from '../access.js';
import type { BalanceEntry } from '../payments/index.js';
import type { Tracked } from '../pipeline/tracked.js';
import { coinTrends, pointTimes } from '../views/charts.js';
import { TREND_DAYS } from '../views/digest-charts.js';
import { type HomeBalance, homeView } from '../views/home.js';
import type { HomeTrend } from '../views/home-trend.js';
import { countedCall, type ListenerDeps } from './deps.js';

/** The part of Bolt's WebClient the App Home uses. */
export interface HomeClient {
  views: { publish(args: webApi.ViewsPublishArguments): Promise<unknown> };
}

/** How long the home tab waits for the balance before it says it could not read it. */
const HOME_BALANCE_WAIT_MS = 2000;

/** The week of the coin this person chose, from the feed's readings, in one read. */
async function homeTrend(deps: ListenerDeps, userId: string): Promise<HomeTrend> {
  const times = pointTimes(deps.clock().getTime(), TREND_DAYS);
  const [inForce, chosen] = await Promise.all([deps.feed.readingsAt(times), deps.homeCoins?.chosen(userId)]);
  return { trends: coinTrends(times, inForce), chosen };
}

/**
 * Publishes one person's App Home: reads what it needs once, in parallel, within a couple of
 * seconds; a failing service still gets a view that says so. Opening the tab publishes it, and
 * so does a click in it (a Home button has no response_url to answer through).
 */
export async function publishHome(deps: ListenerDeps, client: HomeClient, userId: string): Promise<Tracked> {
  // The event names the workspace the app is installed in, never the person's own: Slack's
  // directory tells theirs (docs/slack.md#app-home). The App Home is in no channel.
  let teamId: string | undefined;
  let balanceRefused: Refusal | undefined;
  let feedsRefused: Refusal | undefined;
  try {
    const who = await deps.access.whoIs(userId);
    const here = { who, where: { channelId: undefined } };
    [balanceRefused, feedsRefused] = await Promise.all([
      deps.access.refusal({ ...here, what: 'read_balance' }),
      deps.access.refusal({ ...here, what: 'read_feeds' }),
    ]);
    teamId = who.teamId;
  } catch (error) {
    // Slack would not say who this is (users.info failing, or the users:read scope missing until
    // the app is reinstalled): the Home still opens, without the merchant's financial data.
    deps.logger.warn(
      { err: error },
      'could not look the person up with users.info: their App Home shows no balance and no feeds',
    );
    balanceRefused = feedsRefused = 'other_workspace';
  }
  const balance = async (): Promise<HomeBalance> => {
    if (balanceRefused)
      return { kind: 'refused', refusal: balanceRefused, allowedChannels: deps.access.allowedChannels };
    let timer: NodeJS.Timeout | undefined;
    try {
      const entries = await Promise.race([
        deps.payments.getBalance(),
        new Promise<readonly BalanceEntry[]>((_resolve, reject) => {
          timer = setTimeout(
            () => reject(new Error('the balance took longer than 2 s')),
            HOME_BALANCE_WAIT_MS,
          );
        }),
      ]);
      return { kind: 'shown', entries, readAt: deps.clock() };
    } catch (error) {
      return { kind: 'failed', error };
    } finally {
      clearTimeout(timer);
    }
  };
  const [shownBalance, watches, feeds, keyRejectedSince, backlog, more, week] = await Promise.all([
    balance(),
    // Someone Slack does not know has started no watch and sees no feed here.
    teamId === undefined ? [] : deps.watches.startedBy(teamId, userId),
    feedsRefused || teamId === undefined ? undefined : deps.feed.list(teamId),
    deps.keyRejectedSince(),
    deps.outboxBacklog(),
    deps.moreHome?.(userId) ?? [],
    balanceRefused ? undefined : homeTrend(deps, userId),
  ]);
  const view = homeView({
    balance: shownBalance,
    watches,
    feeds,
    health: {
      ...deps.health.snapshot(),
      keyRejectedSince: keyRejectedSince === undefined ? undefined : new Date(keyRejectedSince),
      keySource: deps.keySource,
    },
    outbox: {
      pending: backlog.pending,
      oldestAt: backlog.oldestAt === undefined ? undefined : new Date(backlog.oldestAt),
    },
    now: deps.clock(),
    more,
    trend: week,
  });
  await countedCall(deps, 'views.publish', () => client.views.publish({ user_id: userId, view }));
  return {
    outcome: shownBalance.kind === 'failed' ? 'service_unavailable' : 'ok',
    counts: { watches: watches.length },
  };
}
