import { Pool } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { feedJobs, type InstallationFeed } from '../../src/feed/jobs.js';
import { DEFAULT_DIGEST } from '../../src/feed/schedule.js';
import { createFeed } from '../../src/feed/service.js';
import { CircuitBreaker, createPaymentsClient } from '../../src/payments/index.js';
import { num } from '../../src/sandbox/data.js';
import { LEASE_MS, leased } from '../../src/scheduler.js';
import { serviceState } from '../../src/service-state.js';
import { createInstallations } from '../../src/store/installations.js';
import { type InstallationId, installationId, ONE_WORKSPACE } from '../../src/store/keys.js';
import { createSealer } from '../../src/store/sealing.js';
import { visibleText } from '../support/block-kit.js';
import { captureLogs } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { type RecordingPoster, recordingPoster } from '../support/fake-slack.js';
import { install, KEY } from '../support/installations-contract.js';
import { outboxOf, RETENTION_DAYS, runDue } from '../support/jobs.js';
import { useSandbox } from '../support/use-sandbox.js';

const env = useSandbox();
const FINANCE = 'G0FINANCE';
const MINUTE = 60_000;
const T0 = Date.parse('2026-11-21T08:00:00Z');
const OTHER_KEY = 'merchant-b-feed-jobs-key-9f8e7d';

let pool: Pool;
let clock: { now: number };
beforeEach(async () => {
  pool = new Pool(env.sandbox.url);
  clock = { now: T0 };
  await emptyWork(env.store);
  env.sandbox.addMerchant(OTHER_KEY, {
    balances: [{ id: 'XMR', title: 'Monero', balance: num('1') }],
    invoices: [],
  });
});
afterEach(async () => {
  await pool.close();
});

/** One installation's feed: its own key (the sandbox's own merchant for A, another for B) and its own poster. */
async function installationFeed(id: InstallationId, apiKey: string, connectedAt = T0) {
  const installations = createInstallations(env.store, createSealer({ current: KEY }), () => T0);
  await installations.storeInstallation(install(id, `xoxb-${id}-feed-jobs-token`));
  await installations.connectPaymentKey(id, apiKey, 'U0FINANCE', connectedAt);
  const logs = captureLogs([apiKey]);
  const poster = recordingPoster();
  poster.conversations.set(FINANCE, { isPrivate: true, isDirect: false, isShared: false });
  const feed = createFeed({
    installation: id,
    account: connectedAt,
    store: env.store,
    payments: createPaymentsClient({
      baseUrl: env.sandbox.url,
      apiKey,
      dispatcher: pool,
      userAgent: 'test',
      timeoutMs: 2000,
      breaker: new CircuitBreaker(),
    }),
    poster,
    state: serviceState(env.store, logs.logger, { installation: id }),
    logger: logs.logger,
    clock: () => clock.now,
    pollSeconds: 60,
    policy: {},
  });
  return { feed, poster };
}

/** The scheduler's side: the feed's jobs across installations, and an outbox posting as each installation's bot. */
function serving(feeds: Record<string, { feed: InstallationFeed; poster: RecordingPoster } | undefined>) {
  const logs = captureLogs();
  const served: string[] = [];
  const feedOf = async (id: string) => {
    served.push(id);
    return feeds[id]?.feed;
  };
  const tasks = feedJobs({
    store: env.store,
    gate: serviceState(env.store, logs.logger, { installation: ONE_WORKSPACE }),
    pollSeconds: 60,
    endedRetentionDays: RETENTION_DAYS,
    feedOf,
    digestsOf: feedOf,
  });
  const lease = { owner: 'instance-1', ms: LEASE_MS };
  const jobs = {
    poll: leased(tasks.poll, lease, () => clock.now),
    digest: leased(tasks.digest, lease, () => clock.now),
  };
  const outbox = outboxOf({
    store: env.store,
    posterOf: async (id) => feeds[id]?.poster,
    logger: logs.logger,
    clock: () => clock.now,
    owner: 'instance-1',
  });
  return { jobs, served, tick: () => runDue([jobs.poll, jobs.digest], outbox, clock.now, 10) };
}

const subscribe = (feed: ReturnType<typeof createFeed>, teamId: string) =>
  feed.subscribe({ teamId, channelId: FINANCE, userId: 'U0FINANCE', digest: DEFAULT_DIGEST });

describe('the feed’s jobs across installations', () => {
  it('reads each installation’s balance with its key and tells only its own channels, digest included', async () => {
    const a = await installationFeed(installationId('A'), env.sandbox.apiKey);
    const b = await installationFeed(installationId('B'), OTHER_KEY);
    const { tick, served } = serving({ A: a, B: b });
    expect(await subscribe(a.feed, 'T0A')).toMatchObject({ kind: 'subscribed' });
    expect(await subscribe(b.feed, 'T0B')).toMatchObject({ kind: 'subscribed' });

    env.sandbox.addMerchant(OTHER_KEY, {
      balances: [{ id: 'XMR', title: 'Monero', balance: num('1.25') }],
      invoices: [],
    });
    clock.now += MINUTE;
    await tick();
    expect(served.sort()).toEqual(['A', 'B']);
    expect(a.poster.messages).toHaveLength(1); // its first message only: A's balance did not move
    expect(b.poster.messages).toHaveLength(2);
    expect(visibleText(b.poster.messages[1])).toContain('received *+0.25* XMR');

    // 09:00 UTC: each channel's digest, of its own installation's balance.
    clock.now = Date.parse('2026-11-21T09:00:00Z');
    await tick();
    const digestOf = (p: RecordingPoster) => visibleText(p.messages.at(-1));
    expect(digestOf(a.poster)).toContain('Bitcoin');
    expect(digestOf(a.poster)).not.toContain('Monero');
    expect(digestOf(b.poster)).toContain('Monero');
    expect(digestOf(b.poster)).not.toContain('Bitcoin');
    expect(a.poster.problems).toEqual([]);
    expect(b.poster.problems).toEqual([]);
  });

  it('never announces the gap between two accounts: a reading made with a key replaced meanwhile is kept nowhere', async () => {
    const before = await installationFeed(installationId('A'), OTHER_KEY);
    expect(await subscribe(before.feed, 'T0A')).toMatchObject({ kind: 'subscribed' });
    clock.now += MINUTE;
    await serving({ A: before }).tick();
    // Replace key commits (the readings of the account before go) while an instance still holds
    // the feed it built with the old key: its next reading is of the old account.
    const after = await installationFeed(installationId('A'), env.sandbox.apiKey, T0 + 1);
    clock.now += MINUTE;
    const stale = serving({ A: before });
    const [poll] = await stale.jobs.poll.claim(clock.now, 5);
    expect(poll && (await stale.jobs.poll.run(poll))).toEqual({ outcome: 'account_changed' });
    clock.now += MINUTE;
    await serving({ A: after }).tick();
    clock.now += MINUTE;
    await serving({ A: after }).tick();
    const said = [...before.poster.messages, ...after.poster.messages].map((m) => visibleText(m)).join('\n');
    expect(said).not.toMatch(/withdrawn|received/);
    expect(before.poster.messages).toHaveLength(1); // "the feed is on", and nothing since
    expect(after.poster.messages).toHaveLength(0);
  });

  it('gives back the poll of an installation it cannot serve now, and reads its balance a minute later', async () => {
    const b = await installationFeed(installationId('B'), OTHER_KEY);
    await subscribe(b.feed, 'T0B');
    const unserved = serving({});
    clock.now += MINUTE;
    const [poll] = await unserved.jobs.poll.claim(clock.now, 5);
    expect(poll && (await unserved.jobs.poll.run(poll))).toEqual({ outcome: 'paused' });
    expect(unserved.jobs.poll.describe?.(poll as never)).toEqual({ installation: 'B' });
    expect(await unserved.jobs.poll.claim(clock.now + 59_999, 5)).toEqual([]);

    env.sandbox.addMerchant(OTHER_KEY, {
      balances: [{ id: 'XMR', title: 'Monero', balance: num('2') }],
      invoices: [],
    });
    clock.now += 60_000;
    await serving({ B: b }).tick();
    expect(visibleText(b.poster.messages.at(-1))).toContain('received *+1* XMR');
  });
});

describe('the feed’s jobs, for an installation they cannot serve now', () => {
  const unserved = (pollSeconds = 60) => {
    const tasks = feedJobs({
      store: env.store,
      gate: serviceState(env.store, captureLogs().logger, { installation: ONE_WORKSPACE }),
      pollSeconds,
      endedRetentionDays: RETENTION_DAYS,
      feedOf: async () => undefined,
      digestsOf: async () => undefined,
    });
    const lease = { owner: 'instance-1', ms: LEASE_MS };
    return {
      poll: leased(tasks.poll, lease, () => clock.now),
      digest: leased(tasks.digest, lease, () => clock.now),
    };
  };
  const subscription = () =>
    env.store.db.selectFrom('feed_subscriptions').selectAll().executeTakeFirstOrThrow();
  const pollAt = async () =>
    Number(
      (await env.store.db.selectFrom('singletons').select('next_run_at').executeTakeFirstOrThrow())
        .next_run_at,
    );

  it('holds a digest for a minute, still due when it was, then claims it again', async () => {
    const b = await installationFeed(installationId('B'), OTHER_KEY);
    await subscribe(b.feed, 'T0B');
    const due = (await subscription()).next_digest_at;
    clock.now = due;
    const jobs = unserved();
    const [sub] = await jobs.digest.claim(clock.now, 5);
    if (!sub) throw new Error('a due digest');
    expect(await jobs.digest.run(sub)).toEqual({ outcome: 'paused' });
    expect((await subscription()).next_digest_at).toBe(due);
    expect(await jobs.digest.claim(clock.now + MINUTE - 1, 5)).toEqual([]);
    expect(await jobs.digest.claim(clock.now + MINUTE + 1, 5)).toHaveLength(1);
  });

  it('leaves a poll BALANCE_POLL_SECONDS ahead where it is, and pulls back one further than any schedule puts it', async () => {
    const b = await installationFeed(installationId('B'), OTHER_KEY);
    await subscribe(b.feed, 'T0B');
    const at = (ms: number) => env.store.db.updateTable('singletons').set({ next_run_at: ms }).execute();
    await at(clock.now + 10 * MINUTE);
    await unserved(600).poll.claim(clock.now, 5);
    expect(await pollAt()).toBe(clock.now + 10 * MINUTE);
    await at(clock.now + 12 * MINUTE);
    await unserved(600).poll.claim(clock.now, 5);
    expect(await pollAt()).toBe(clock.now);
  });
});
