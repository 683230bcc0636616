/**
 * What the tenants scenario (bench/tenants.ts) measures of a run: how soon each change was
 * announced in its watch's thread, and whether twice or wrongly; the calls each key made to the
 * service against the background budget; the checks overdue at the end; and, of each instance,
 * whether it is up and how many statements it has sent to the database.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import type { Store } from '../src/store/database.js';
import type { SlackStandIn } from '../test/support/slack-stand-in.js';
import { round, type SandboxCall } from './lib.js';
import { BIG, type Tenant } from './tenants-population.js';

export interface KeyRate {
  calls: number;
  /** Calls over the run's seconds. */
  average: number;
  /** The most calls in one second of the clock (1 s buckets). */
  maxPerSecond: number;
  /** The most calls in any 1,000 ms (a sliding window: stricter, timer jitter included). */
  maxSliding: number;
  /** Calls that end a 1,000 ms window holding more than the budget. */
  slidingOver: number;
  /** The shortest time from a call to the budget-th after it (1,000 or more: never over the budget). */
  shortestSpanMs: number;
  /** The gaps between the calls of that shortest span, in order (ms): which call came early or late. */
  shortestGapsMs: number[];
}

export async function overdue(store: Store, now: number) {
  const rows = await store.db
    .selectFrom('watched_invoices')
    .select((eb) => [
      eb.fn.countAll<string>().as('n'),
      eb.fn.min<number>('next_poll_at').as('oldest'),
      eb.case().when('installation_id', '=', BIG).then(1).else(0).end().as('big'),
    ])
    .where('next_poll_at', '<', now - 5000)
    .groupBy('big')
    .execute();
  const of = (big: number) => rows.find((r) => Number(r.big) === big);
  const late = (big: number) => {
    const oldest = of(big)?.oldest;
    return oldest === undefined || oldest === null ? 0 : round((now - Number(oldest)) / 1000);
  };
  return {
    small: Number(of(0)?.n ?? 0),
    big: Number(of(1)?.n ?? 0),
    oldestSmallSeconds: late(0),
    oldestBigSeconds: late(1),
  };
}

function rateOf(times: number[], seconds: number, budget: number): KeyRate {
  times.sort((a, b) => a - b);
  const buckets = new Map<number, number>();
  for (const t of times) buckets.set(Math.floor(t / 1000), (buckets.get(Math.floor(t / 1000)) ?? 0) + 1);
  let maxSliding = 0;
  let slidingOver = 0;
  for (let i = 0, j = 0; j < times.length; j += 1) {
    while ((times[j] as number) - (times[i] as number) >= 1000) i += 1;
    maxSliding = Math.max(maxSliding, j - i + 1);
    if (j - i + 1 > budget) slidingOver += 1;
  }
  let from = 0;
  for (let i = 0; i + budget < times.length; i += 1)
    if (
      (times[i + budget] as number) - (times[i] as number) <
      (times[from + budget] as number) - (times[from] as number)
    )
      from = i;
  const shortest = times.slice(from, from + budget + 1);
  return {
    shortestGapsMs: shortest.slice(1).map((t, i) => t - (shortest[i] as number)),
    calls: times.length,
    average: round(times.length / seconds, 2),
    maxPerSecond: Math.max(0, ...buckets.values()),
    maxSliding,
    slidingOver,
    shortestSpanMs: times.reduce(
      (min, t, i) => (i + budget < times.length ? Math.min(min, (times[i + budget] as number) - t) : min),
      Number.POSITIVE_INFINITY,
    ),
  };
}

export async function healthy(url: string, timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  for (;;) {
    try {
      const response = await request(`${url}/healthz`, { reset: true });
      await response.body.dump();
      if (response.statusCode === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() - started > timeoutMs) throw new Error(`${url} was not healthy within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** The statements an instance has sent to the database (its /metrics). */
export async function statementsOf(url: string): Promise<number> {
  const response = await request(`${url}/metrics`, { reset: true });
  const text = await response.body.text();
  return Number(/^slackbot_db_statements_total (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

/** An invoice the run changed: whose, which watch's, and when. */
export interface Change {
  tenant: Tenant;
  watch: Tenant['watches'][number];
  at: number;
}

/**
 * Of the thread posts Slack received: the delay from each change to the first post in its
 * watch's thread, the changes announced more than once, and the posts in threads of watches
 * whose invoice did not change (`taken` holds the threads of those that did).
 */
export function announcements(slack: SlackStandIn, changed: Change[], taken: Set<string>) {
  const threadPosts = slack.calls.filter((c) => c.method === 'chat.postMessage' && c.args.thread_ts);
  const postsByThread = new Map<string, number[]>();
  for (const c of threadPosts) {
    const ts = String(c.args.thread_ts);
    const posts = postsByThread.get(ts) ?? [];
    posts.push(c.at);
    postsByThread.set(ts, posts);
  }
  const delays: number[] = [];
  let duplicates = 0;
  for (const c of changed) {
    const posts = (postsByThread.get(c.watch.ts) ?? []).filter((at) => at >= c.at);
    if (posts[0] !== undefined) delays.push(posts[0] - c.at);
    if (posts.length > 1) duplicates += 1;
  }
  const spuriousPosts = [...postsByThread.entries()]
    .filter(([ts]) => !taken.has(ts))
    .reduce((n, [, posts]) => n + posts.length, 0);
  return { delays, duplicates, spuriousPosts };
}

/** The calls to the service over the run's `seconds`: all keys', each small key's against `budget`, the big key's. */
export function serviceRates(
  calls: SandboxCall[],
  tenants: { small: Tenant[]; big: Tenant },
  seconds: number,
  budget: number,
) {
  const byKey = new Map<string, number[]>();
  for (const [at, authorization] of calls) {
    const times = byKey.get(authorization) ?? [];
    times.push(at);
    byKey.set(authorization, times);
  }
  const { small, big } = tenants;
  const smallRates = small.map((t) => rateOf(byKey.get(`Token ${t.apiKey}`) ?? [], seconds, budget));
  const bigKey = rateOf(byKey.get(`Token ${big.apiKey}`) ?? [], seconds, budget);
  return {
    callsPerSecond: round(calls.length / seconds, 1),
    smallKeys: {
      keys: small.length,
      averagePerKey: round(smallRates.reduce((n, r) => n + r.calls, 0) / small.length / seconds, 3),
      maxPerSecond: Math.max(0, ...smallRates.map((r) => r.maxPerSecond)),
      maxSliding: Math.max(0, ...smallRates.map((r) => r.maxSliding)),
      overBudget: smallRates.filter((r) => r.maxPerSecond > budget).length,
      slidingOver: smallRates.filter((r) => r.slidingOver > 0).length,
    },
    bigKey,
  };
}
