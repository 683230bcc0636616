import type { AllMiddlewareArgs } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { feedJobs } from '../../src/feed/jobs.js';
import { type OutboxRow, outboxJob } from '../../src/outbox.js';
import { DEMO_INVOICE_IDS, num } from '../../src/sandbox/data.js';
import { LEASE_MS, leased } from '../../src/scheduler.js';
import { serviceState } from '../../src/service-state.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { createInstallations, type InstallationSummary } from '../../src/store/installations.js';
import { installationId, ONE_WORKSPACE } from '../../src/store/keys.js';
import { createSealer } from '../../src/store/sealing.js';
import type { ClaimedCheck } from '../../src/watches/queries-checks.js';
import { install, KEY } from '../support/installations-contract.js';
import { RETENTION_DAYS, runDue } from '../support/jobs.js';
import { startSlackStandIn } from '../support/slack-stand-in.js';
import { ask, balance, ID, installation, OTHER_KEY, useTenantsWorld } from '../support/tenants-world.js';

/**
 * The tenants as background work sees them: the parts its watches, feeds, digests and outbox are
 * served by, whose tokens and keys change under them, and what it does for an installation gone.
 */
const world = useTenantsWorld();
const { tenants } = world;

describe('background work’s installations', () => {
  it('opens an installation’s token once while the store holds the same one, again once it changes, and once a minute while it is due to rotate', async () => {
    let now = 1_000_000;
    const asked: string[] = [];
    const summaries = { T0ONE: installation('T0ONE', 1) };
    const t = tenants(
      { T0ONE: OTHER_KEY },
      {
        summaries,
        clock: () => now,
        tokenFor: async (inst) => {
          asked.push(inst.id);
          return `xoxb-${inst.id}`;
        },
      },
    );
    expect(await t.tenants.watchesOf(ID.ONE)).toBeDefined();
    expect(await t.tenants.posterOf(ID.ONE)).toBeDefined();
    expect(asked).toEqual(['T0ONE']);
    now += 3_600_000;
    await t.tenants.watchesOf(ID.ONE);
    expect(asked).toHaveLength(1);
    // Rotated, sealed again or revoked, by any instance: the next check opens it again.
    summaries.T0ONE = { ...installation('T0ONE', 1), tokenSealing: 'seal-2' };
    await t.tenants.watchesOf(ID.ONE);
    await t.tenants.watchesOf(ID.ONE);
    expect(asked).toHaveLength(2);
    // Within two hours of its expiry, asked for once a minute (the asking refreshes it).
    summaries.T0ONE = { ...summaries.T0ONE, tokenExpiresAt: now + 3_600_000 };
    now += 59_999;
    await t.tenants.watchesOf(ID.ONE);
    expect(asked).toHaveLength(2);
    now += 1;
    await t.tenants.watchesOf(ID.ONE);
    expect(asked).toHaveLength(3);
    t.tenants.forget(ID.ONE);
    await t.tenants.posterOf(ID.ONE);
    expect(asked).toHaveLength(4);
    // Built once before it was forgotten, once after.
    expect(t.made).toEqual([OTHER_KEY, OTHER_KEY]);
  });

  it('checks with a replaced key no more: the next check after the change builds with the new one, within the minute', async () => {
    const summaries = { T0ONE: installation('T0ONE', 1) };
    const keys: Record<string, string> = { T0ONE: OTHER_KEY };
    const t = tenants(keys, { summaries, clock: () => 1_000_000 });
    await t.tenants.watchesOf(ID.ONE);
    await t.tenants.watchesOf(ID.ONE);
    expect(t.made).toEqual([OTHER_KEY]);
    summaries.T0ONE = installation('T0ONE', 2);
    keys.T0ONE = world.sandbox.apiKey;
    expect(await t.tenants.watchesOf(ID.ONE)).toBeDefined();
    expect(t.made).toEqual([OTHER_KEY, world.sandbox.apiKey]);
  });

  it('serves an installation whose key the service rejects for one check a minute, all instances together', async () => {
    let now = 5_000_000;
    const summaries = { T0BAD: installation('T0BAD', 1) };
    const [one, two] = [0, 1].map(() =>
      tenants({ T0BAD: 'a-rejected-key' }, { summaries, clock: () => now }),
    );
    if (!one || !two) throw new Error('two instances');
    expect(await one.tenants.watchesOf(ID.BAD)).toBeDefined();
    await serviceState(world.store, one.logs.logger, { installation: ID.BAD }).markKeyRejected(now);
    const served = async () => {
      const parts = await Promise.all(
        [one, two].flatMap((t) => [t.tenants.watchesOf(ID.BAD), t.tenants.feedOf(ID.BAD)]),
      );
      return parts.filter((p) => p !== undefined).length;
    };
    expect(await served()).toBe(1);
    now += 30_000;
    expect(await served()).toBe(0);
    now += 30_000;
    expect(await served()).toBe(1);
    // Posting and digests need no key: messages and digests still go, and spend no probe.
    expect(await two.tenants.posterOf(ID.BAD)).toBeDefined();
    expect(await one.tenants.digestsOf(ID.BAD)).toBeDefined();
    expect(await two.tenants.digestsOf(ID.BAD)).toBeDefined();
    now += 60_000;
    expect(await served()).toBe(1);
    await serviceState(world.store, one.logs.logger, { installation: ID.BAD }).markKeyAccepted();
    expect(await served()).toBe(4);
  });

  it('posts with the part a request rebuilt for a rotated token, not the one it resolved before', async () => {
    const inst = installation('T0ONE', 1);
    const t = tenants({ T0ONE: OTHER_KEY }, { summaries: { T0ONE: inst } });
    /** The token the installation's messages go out with now (any call through its poster). */
    const posting = async () => {
      await (await t.tenants.posterOf(ID.ONE))?.conversation('C0TOKEN').catch(() => undefined);
      return world.anySlack.calls.findLast((c) => c.method === 'conversations.info')?.token;
    };
    expect([await posting(), await posting()]).toEqual(['xoxb-T0ONE', 'xoxb-T0ONE']);
    await balance(t.tenants, inst, '', 'xoxb-rotated');
    expect(await posting()).toBe('xoxb-rotated');
  });

  it('has no feeds for an installation without a payment account, ends its watches at their check, and posts for it', async () => {
    const t = tenants({}, { summaries: { T0NEW: installation('T0NEW') } });
    const unconnected = await t.tenants.watchesOf(installationId('T0NEW'));
    expect(await unconnected?.check({ invoice_id: 'I-NONE' } as ClaimedCheck)).toEqual({
      outcome: 'not_connected',
    });
    expect(await t.tenants.feedOf(installationId('T0NEW'))).toBeUndefined();
    expect(await t.tenants.posterOf(installationId('T0NEW'))).toBeDefined();
  });

  it('lets a feed’s message go only while its installation’s feed runs; others always, the unserved later', async () => {
    const t = tenants({ A: OTHER_KEY }, { summaries: { A: installation('A', 1), NEW: installation('NEW') } });
    const row = (id: string, subscriptionId: string | null) =>
      ({ installation_id: installationId(id), subscription_id: subscriptionId }) as OutboxRow;
    // Not a feed's: nothing to ask.
    expect(await t.tenants.mayDeliver(row('GONE', null))).toBe(true);
    // Cannot be served now: the outbox finds no bot to post with either, and waits.
    expect(await t.tenants.mayDeliver(row('GONE', 'sub-1'))).toBe(true);
    // Its account was disconnected since: its feed's message is not sent, but the rest is (the
    // ended watches' last words: "No longer watching … the payment account was disconnected").
    expect(await t.tenants.mayDeliver(row('NEW', 'sub-1'))).toBe(false);
    expect(await t.tenants.mayDeliver(row('NEW', null))).toBe(true);
    // Connected: the feed decides, and a feed it does not have (another installation's) is over.
    expect(await t.tenants.feedOf(ID.A)).toBeDefined();
    expect(await t.tenants.mayDeliver(row('A', 'sub-of-another'))).toBe(false);
  });

  it('serves nothing for an installation gone, without a token, or the store failing, and says which', async () => {
    const gone = tenants({ A: OTHER_KEY });
    expect(await gone.tenants.watchesOf(ID.A)).toBeUndefined();
    expect(await gone.tenants.feedOf(ID.A)).toBeUndefined();
    expect(await gone.tenants.digestsOf(ID.A)).toBeUndefined();
    // Gone is no failure: nothing to warn about.
    expect(gone.logs.lines.filter((l) => l.level === 'warn')).toEqual([]);
    const revoked = tenants(
      { A: OTHER_KEY },
      { summaries: { A: installation('A', 1) }, tokenFor: async () => undefined },
    );
    expect(await revoked.tenants.posterOf(ID.A)).toBeUndefined();
    const failing = tenants(
      { A: OTHER_KEY },
      {
        summaries: { A: installation('A', 1) },
        tokenFor: async () => {
          throw new Error('no installation for A');
        },
      },
    );
    expect(await failing.tenants.watchesOf(ID.A)).toBeUndefined();
    expect(failing.logs.lines.find((l) => l.installation === 'A')).toMatchObject({
      level: 'warn',
      msg: 'could not serve an installation’s background work',
    });
    expect(revoked.made).toEqual([]);
  });

  it('forgets an installation background work finds uninstalled: nothing of it stays in memory', async () => {
    const summaries: Record<string, InstallationSummary> = { A: installation('A', 1) };
    const t = tenants({ A: OTHER_KEY }, { summaries });
    expect(await t.tenants.posterOf(ID.A)).toBeDefined();
    expect(t.tenants.size).toBe(1);
    delete summaries.A;
    expect(await t.tenants.posterOf(ID.A)).toBeUndefined();
    expect(t.tenants.size).toBe(0);
    expect(t.closed).toEqual(['A']);
    expect(t.logs.lines.filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('builds the part again within the minute when a request’s rebuild of it failed', async () => {
    let now = 1_000_000;
    const inst = installation('A', 1);
    const t = tenants({ A: OTHER_KEY }, { summaries: { A: inst }, clock: () => now });
    expect(await t.tenants.posterOf(ID.A)).toBeDefined();
    t.failNextKey();
    await expect(balance(t.tenants, inst, '', 'xoxb-rotated')).rejects.toThrow('the store is not answering');
    expect(t.tenants.size).toBe(0);
    now += 1000;
    expect(await t.tenants.watchesOf(ID.A)).toBeDefined();
    expect(t.made).toEqual([OTHER_KEY, OTHER_KEY]);
  });

  it('asks for the token at every check while it is revoked, never serving with the part a request built', async () => {
    const asked: string[] = [];
    let revoked = false;
    const inst = installation('A', 1);
    const t = tenants(
      { A: OTHER_KEY },
      {
        summaries: { A: inst },
        clock: () => 1_000_000,
        tokenFor: async (i) => {
          asked.push(i.id);
          return revoked ? undefined : `xoxb-${i.id}`;
        },
      },
    );
    await balance(t.tenants, inst);
    revoked = true;
    expect(await t.tenants.posterOf(ID.A)).toBeUndefined();
    expect(await t.tenants.posterOf(ID.A)).toBeUndefined();
    expect(asked).toEqual(['A', 'A']);
  });

  it('ends a watch whose card Slack will never take again; a message of an installation without watches ends nothing', async () => {
    const slack = await startSlackStandIn({ teamId: 'T0WATCH', botToken: 'xoxb-T0WATCH' });
    const t = tenants(
      { T0WATCH: world.sandbox.apiKey },
      {
        summaries: { T0WATCH: installation('T0WATCH', 1), NEW: installation('NEW') },
        slackApiUrl: slack.apiUrl,
      },
    );
    const watches = (await t.tenants.partOf(installationId('T0WATCH')))?.watches;
    if (!watches) throw new Error('T0WATCH has watches');
    expect(
      await watches.start({
        teamId: 'T0WATCH',
        channelId: 'C0WATCH',
        userId: 'U0WATCHER',
        invoiceId: DEMO_INVOICE_IDS.open,
      }),
    ).toMatchObject({ kind: 'started' });
    const [watch] = await watches.list('C0WATCH');
    if (!watch) throw new Error('a watch in C0WATCH');
    const deleted = new SlackPostError('message_not_found', 'message_not_found');
    const row = (id: string) => ({ installation_id: installationId(id), watch_id: watch.id }) as OutboxRow;
    // Not served now, or not connected: nothing to end, and nothing fails.
    await expect(t.tenants.undeliverable(row('GONE'), deleted)).resolves.toBeUndefined();
    await expect(t.tenants.undeliverable(row('NEW'), deleted)).resolves.toBeUndefined();
    expect(await watches.list('C0WATCH')).toHaveLength(1);
    await t.tenants.undeliverable(row('T0WATCH'), deleted);
    expect(await watches.list('C0WATCH')).toEqual([]);
    await slack.close();
  });

  it('keeps each reading of a connected installation’s balance and tells its channel what moved; its rejected key is logged as its own', async () => {
    const FEED_KEY = 'merchant-feed-reading-key-5a6b7c';
    const balanceOf = (amount: string) => ({
      balances: [{ id: 'XMR', title: 'Monero', balance: num(amount) }],
      invoices: [],
    });
    world.sandbox.addMerchant(FEED_KEY, balanceOf('1'));
    let now = 2_000_000;
    const clock = () => now;
    const stored = createInstallations(world.store, createSealer({ current: KEY }), clock);
    await stored.storeInstallation(install('T0FEED', 'xoxb-T0FEED'));
    await stored.connectPaymentKey(installationId('T0FEED'), FEED_KEY, 'U0T0FEEDADMIN', now);
    const inst = await stored.summaryOf(installationId('T0FEED'));
    if (!inst) throw new Error('T0FEED is installed');
    const slack = await startSlackStandIn({ teamId: 'T0FEED', botToken: 'xoxb-T0FEED' });
    slack.conversations.set('G0FEED', { id: 'G0FEED', is_private: true });
    const t = tenants({}, { installations: stored, clock, slackApiUrl: slack.apiUrl });
    expect(await ask(t.tenants, inst, '/balance', 'subscribe', 'xoxb-T0FEED', 'G0FEED')).toContain(
      'the payments feed is on in this channel',
    );
    // The scheduler's side: the balance poll across installations, and the outbox.
    const lease = { owner: 'test', ms: LEASE_MS };
    const jobs = feedJobs({
      store: world.store,
      gate: serviceState(world.store, t.logs.logger, { installation: ONE_WORKSPACE }),
      pollSeconds: 60,
      endedRetentionDays: RETENTION_DAYS,
      feedOf: t.tenants.feedOf,
      digestsOf: t.tenants.digestsOf,
    });
    const outbox = leased(
      outboxJob({
        store: world.store,
        posterOf: t.tenants.posterOf,
        mayDeliver: t.tenants.mayDeliver,
        logger: t.logs.logger,
        clock,
      }),
      lease,
      clock,
    );
    const tick = () => runDue([leased(jobs.poll, lease, clock)], outbox, now);
    const said = () =>
      slack.calls
        .filter((c) => c.method === 'chat.postMessage' && c.args.channel === 'G0FEED')
        .map((c) => JSON.stringify(c.args));

    world.sandbox.addMerchant(FEED_KEY, balanceOf('1.5'));
    now += 60_000;
    await tick();
    expect(said().at(-1)).toContain('received *+0.5* XMR');

    world.sandbox.failNext({ kind: 'status', status: 401 });
    now += 60_000;
    await tick();
    expect(t.logs.lines.find((l) => String(l.msg).startsWith('the payment service rejects'))).toMatchObject({
      level: 'error',
      installation: 'T0FEED',
    });
    await slack.close();
  });

  it('publishes a connected installation’s Home: its balance, then its payment account', async () => {
    const slack = await startSlackStandIn({ teamId: 'T0ONE', botToken: 'xoxb-T0ONE' });
    const t = tenants({ T0ONE: OTHER_KEY }, { slackApiUrl: slack.apiUrl });
    const inst = installation('T0ONE', 1);
    const published: unknown[] = [];
    const client = { views: { publish: async (view: unknown) => void published.push(view) } };
    const context = { installation: inst, botToken: 'xoxb-T0ONE' } as unknown as AllMiddlewareArgs['context'];
    await t.tenants.publishHome(context, inst, client as never, inst.installerUserId);
    const view = JSON.stringify(published[0]);
    expect(view).toContain('Monero');
    expect(view.indexOf('Payment account')).toBeGreaterThan(view.indexOf('Monero'));
    expect(view).toContain('disconnect_payment_account');
    // The service's answer is in the installation's own health, and the look-up in the metrics.
    expect(view).toContain('Last good answer from the payment service');
    expect(t.slackCalls).toContain('users.info:ok:T0ONE');
    expect(t.slackCalls).toContain('views.publish:ok:T0ONE');
    await slack.close();
  });
});
