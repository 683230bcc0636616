import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AllMiddlewareArgs, SlashCommand } from '@slack/bolt';
import fc from 'fast-check';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedJobs } from '../../src/feed/jobs.js';
import { Inflight } from '../../src/inflight.js';
import { backgroundParts } from '../../src/installations/background.js';
import { createCommon } from '../../src/installations/tenant.js';
import { createTenants, type PaymentsFor, type TenantsDeps } from '../../src/installations/tenants.js';
import type { CommandArgs } from '../../src/listeners/args.js';
import { type OutboxRow, outboxJob } from '../../src/outbox.js';
import { CircuitBreaker, createPaymentsClient, type PaymentsClient } from '../../src/payments/index.js';
import { DEMO_INVOICE_IDS, demoInvoices, num, type WireInvoice } from '../../src/sandbox/data.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { LEASE_MS, leased } from '../../src/scheduler.js';
import { serviceState } from '../../src/service-state.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { openStore, type Store } from '../../src/store/database.js';
import {
  createInstallations,
  type InstallationSummary,
  type Installations,
} from '../../src/store/installations.js';
import { installationId, ONE_WORKSPACE } from '../../src/store/keys.js';
import { createSealer } from '../../src/store/sealing.js';
import type { ClaimedCheck } from '../../src/watches/queries-checks.js';
import {
  captureLogs,
  commandArgs,
  linkSharedArgs,
  recordingResponseUrls,
  TEST_WATCH_SETTINGS,
} from '../support/bolt.js';
import { install, KEY } from '../support/installations-contract.js';
import { RETENTION_DAYS, runDue, withWatchesOf } from '../support/jobs.js';
import { type SlackStandIn, startSlackStandIn } from '../support/slack-stand-in.js';

const OTHER_KEY = 'merchant-other-unit-key-1f2e3d';
const OTHER = { id: 'XMR', title: 'Monero', balance: num('77.7777') };

let sandbox: Sandbox;
let pool: Pool;
let store: Store;
/** Where the installations' Web API calls go unless a test says: users.info answers everyone a member. */
let anySlack: SlackStandIn;
beforeAll(async () => {
  anySlack = await startSlackStandIn({ teamId: 'T0ANY', botToken: 'xoxb-any' });
  store = await openStore({
    kind: 'sqlite',
    path: join(mkdtempSync(join(tmpdir(), 'tenants-')), 'bot.sqlite'),
  });
  sandbox = await startSandbox();
  sandbox.addMerchant(OTHER_KEY, { balances: [OTHER], invoices: [] });
  pool = new Pool(sandbox.url);
});
afterAll(async () => {
  await anySlack.close();
  await store.close();
  await pool.close();
  await sandbox.close();
});

/** The installations most tests name. */
const ID = {
  A: installationId('A'),
  B: installationId('B'),
  ONE: installationId('T0ONE'),
  BAD: installationId('T0BAD'),
};

/** The summary of the installation of workspace `id`, connected at `connectedAt` unless undefined. */
const installation = (id: string, connectedAt?: number): InstallationSummary => ({
  id: installationId(id),
  home: { teamId: id, enterpriseId: undefined },
  enterpriseInstall: false,
  installerUserId: `U0${id}ADMIN`,
  account: connectedAt === undefined ? undefined : { connectedBy: `U0${id}ADMIN`, connectedAt },
  tokenExpiresAt: undefined,
  tokenSealing: 'seal-1',
});

/** Tenants over the sandbox, with each installation's key as `keys` says; records every client made. */
function tenants(
  keys: Record<string, string | undefined>,
  opts: {
    max?: number;
    /** What the store says of each installation (background work reads it); none by default. */
    summaries?: Record<string, InstallationSummary>;
    /** The token background work gets; `xoxb-<id>` by default. */
    tokenFor?: TenantsDeps['tokenFor'];
    clock?: () => number;
    /** Where the installations' Web API calls go; `anySlack` by default. */
    slackApiUrl?: string;
    /** The installations the store holds, instead of `keys` and `summaries`. */
    installations?: Installations;
    /** Payments clients with nothing to let go (no `close`), as `PaymentsClient` allows. */
    withoutClose?: boolean;
  } = {},
) {
  const made: string[] = [];
  /** The installations whose payments client was let go, in order. */
  const closed: string[] = [];
  const slackCalls: string[] = [];
  const requests: string[] = [];
  const seen: string[] = [];
  const connects: string[] = [];
  const homes: string[] = [];
  const logs = captureLogs([sandbox.apiKey, OTHER_KEY]);
  const paymentsFor: PaymentsFor = (apiKey, options) => {
    made.push(apiKey);
    const client = createPaymentsClient({
      baseUrl: sandbox.url,
      apiKey,
      dispatcher: pool,
      userAgent: 'test',
      timeoutMs: options.timeoutMs,
      breaker: new CircuitBreaker(),
      ...(options.onCall ? { onCall: options.onCall } : {}),
    });
    const calls: PaymentsClient = {
      getBalance: (call) => client.getBalance(call),
      getInvoice: (id, call) => client.getInvoice(id, call),
    };
    if (opts.withoutClose) return calls;
    return {
      ...calls,
      close: () => {
        closed.push(options.installation ?? '');
        client.close?.();
      },
    };
  };
  let failNextKey = false;
  const installations =
    opts.installations ??
    ({
      async summaryOf(id: string) {
        return opts.summaries?.[id];
      },
      async paymentKeyOf(id: string) {
        if (failNextKey) {
          failNextKey = false;
          throw new Error('the store is not answering');
        }
        return keys[id];
      },
    } as unknown as Installations);
  const clock = opts.clock ?? Date.now;
  const common = createCommon({
    settings: {
      invoiceReply: 'in_channel',
      watches: TEST_WATCH_SETTINGS,
      balancePollSeconds: 60,
      payments: { payUrl: undefined, timeoutMs: 2000 },
    },
    logger: logs.logger,
    store,
    metrics: {
      request: (kind, name, outcome, _seconds, installation) => {
        requests.push(`${installation}:${kind}:${name}:${outcome}`);
      },
      slackCall: (method, result, installation) => {
        slackCalls.push(`${method}:${result}:${installation}`);
      },
    },
    breaker: new CircuitBreaker(),
    inflight: new Inflight(),
    clock,
    owner: 'test',
    clientOptions: {
      slackApiUrl: opts.slackApiUrl ?? anySlack.apiUrl,
      retryConfig: { retries: 0 },
    },
    wakeOutbox: () => undefined,
  });
  const deps: TenantsDeps = {
    common: {
      ...common,
      shared: {
        ...common.shared,
        responseUrls: recordingResponseUrls,
        firstSight: async (key) => {
          seen.push(key);
          return true;
        },
      },
    },
    tokenFor: opts.tokenFor ?? (async (inst) => `xoxb-${inst.id}`),
    installations,
    paymentsFor,
    connect: async (args) => {
      connects.push(args.command.user_id);
      await args.ack();
    },
    publishAccountHome: async (_client, inst, userId) => {
      homes.push(`${inst.id}:${userId}`);
    },
    ...(opts.max === undefined ? {} : { max: opts.max }),
  };
  const created = createTenants(deps);
  return {
    // Assigned, not spread: `size` stays a getter.
    tenants: Object.assign(
      created,
      withWatchesOf(
        backgroundParts(created, {
          store,
          logger: logs.logger,
          clock,
          settings: { watches: TEST_WATCH_SETTINGS },
        }),
      ),
    ),
    slackCalls,
    requests,
    seen,
    made,
    closed,
    connects,
    homes,
    logs,
    failNextKey: () => {
      failNextKey = true;
    },
  };
}

/** Runs a command through the installation's handlers; resolves with what the person sees. */
async function ask(
  t: ReturnType<typeof tenants>['tenants'],
  inst: InstallationSummary,
  command: '/balance' | '/invoice',
  text: string,
  token = `xoxb-${inst.id}`,
  channel = 'C0SUPPORT',
) {
  const { args, rec } = commandArgs({
    command,
    text,
    team_id: inst.id,
    channel_id: channel,
  } as Partial<SlashCommand>);
  const context = { installation: inst, botToken: token } as unknown as AllMiddlewareArgs['context'];
  const handlers = await t.handlersOf(context);
  await handlers.command[command]({ ...args, context } as unknown as CommandArgs);
  return JSON.stringify([...rec.acks, ...rec.responses]);
}

const balance = (
  t: ReturnType<typeof tenants>['tenants'],
  inst: InstallationSummary,
  text = '',
  token?: string,
) => ask(t, inst, '/balance', text, token);

describe('each installation’s own handlers', () => {
  it('reads each installation’s money with its own key, and only its own', async () => {
    const t = tenants({ T0ONE: OTHER_KEY, T0TWO: sandbox.apiKey });
    const [one, two] = await Promise.all([
      balance(t.tenants, installation('T0ONE', 1)),
      balance(t.tenants, installation('T0TWO', 1)),
    ]);
    expect(one).toContain('Monero');
    expect(one).not.toContain('Bitcoin');
    expect(two).toContain('Bitcoin');
    expect(two).not.toContain('Monero');
    expect(t.made.sort()).toEqual([OTHER_KEY, sandbox.apiKey].sort());
  });

  it('builds an installation’s part once, and again for a new key or a rotated token', async () => {
    const t = tenants({ T0ONE: OTHER_KEY });
    await Promise.all([
      balance(t.tenants, installation('T0ONE', 1)),
      balance(t.tenants, installation('T0ONE', 1)),
    ]);
    expect(t.made).toHaveLength(1);
    await balance(t.tenants, installation('T0ONE', 2));
    expect(t.made).toHaveLength(2);
    await balance(t.tenants, installation('T0ONE', 2), '', 'xoxb-rotated');
    expect(t.made).toHaveLength(3);
    await balance(t.tenants, installation('T0ONE', 2), '', 'xoxb-rotated');
    expect(t.made).toHaveLength(3);
  });

  it('keeps at most `max` installations, dropping the least recently used', async () => {
    const t = tenants({ A: OTHER_KEY, B: OTHER_KEY, C: OTHER_KEY }, { max: 2 });
    await balance(t.tenants, installation('A', 1));
    await balance(t.tenants, installation('B', 1));
    await balance(t.tenants, installation('A', 1));
    await balance(t.tenants, installation('C', 1));
    expect(t.tenants.size).toBe(2);
    expect(t.made).toHaveLength(3);
    await balance(t.tenants, installation('A', 1));
    expect(t.made).toHaveLength(3);
    await balance(t.tenants, installation('B', 1));
    expect(t.made).toHaveLength(4);
  });

  it('forgets an installation at once when told (uninstalled, token revoked)', async () => {
    const t = tenants({ A: OTHER_KEY });
    await balance(t.tenants, installation('A', 1));
    t.tenants.forget(ID.A);
    expect(t.tenants.size).toBe(0);
    await balance(t.tenants, installation('A', 1));
    expect(t.made).toHaveLength(2);
    // One this instance never served (uninstalled while another instance served it): nothing to forget.
    expect(() => t.tenants.forget(ID.B)).not.toThrow();
    expect(t.tenants.size).toBe(1);
  });

  it('does not keep a part whose build failed: the next request builds it again', async () => {
    const t = tenants({ A: OTHER_KEY });
    t.failNextKey();
    await expect(balance(t.tenants, installation('A', 1))).rejects.toThrow('the store is not answering');
    expect(t.tenants.size).toBe(0);
    expect(await balance(t.tenants, installation('A', 1))).toContain('Monero');
  });

  it('keeps the part built after the installation was forgotten when a build from before fails', async () => {
    const t = tenants({ A: OTHER_KEY });
    const context = {
      installation: installation('A', 1),
      botToken: 'xoxb-A',
    } as unknown as AllMiddlewareArgs['context'];
    t.failNextKey();
    const failing = t.tenants.handlersOf(context);
    // Uninstalled and installed again (or evicted) while that build was still reading the key.
    t.tenants.forget(ID.A);
    const served = t.tenants.handlersOf(context);
    await expect(failing).rejects.toThrow('the store is not answering');
    await served;
    expect(t.tenants.size).toBe(1);
    expect(await balance(t.tenants, installation('A', 1))).toContain('Monero');
    expect(t.made).toEqual([OTHER_KEY]);
  });

  it('lets go of the payments client of each part no longer used: a replaced key, the least recently used, a forgotten one', async () => {
    const t = tenants({ A: OTHER_KEY, B: OTHER_KEY, C: OTHER_KEY }, { max: 2 });
    await balance(t.tenants, installation('A', 1));
    await balance(t.tenants, installation('A', 2));
    expect(t.closed).toEqual(['A']);
    await balance(t.tenants, installation('B', 1));
    await balance(t.tenants, installation('C', 1));
    expect(t.tenants.size).toBe(2);
    expect(t.closed).toEqual(['A', 'A']);
    t.tenants.forget(ID.B);
    await new Promise((resolve) => setImmediate(resolve));
    expect(t.closed).toEqual(['A', 'A', 'B']);
  });

  it('serves a replaced key when the old key’s client has nothing to let go', async () => {
    const t = tenants({ A: OTHER_KEY }, { withoutClose: true });
    await balance(t.tenants, installation('A', 1));
    expect(await balance(t.tenants, installation('A', 2))).toContain('Monero');
    expect(t.made).toHaveLength(2);
  });

  it('serves an installation connected since it was last seen not connected', async () => {
    const t = tenants({ A: OTHER_KEY });
    expect(await balance(t.tenants, installation('A'))).toContain('not connected');
    expect(await balance(t.tenants, installation('A', 1))).toContain('Monero');
    expect(t.made).toEqual([OTHER_KEY]);
  });

  it('answers an installation without a payment account that it is not connected, calling no service', async () => {
    const t = tenants({});
    const asked = sandbox.requests.length;
    const answer = await balance(t.tenants, installation('T0NEW'));
    expect(answer).toContain('not connected');
    expect(answer).toContain('<@U0T0NEWADMIN>');
    expect(sandbox.requests).toHaveLength(asked);
    expect(t.made).toEqual([]);
  });

  it('treats an account whose key is gone (disconnected meanwhile) as not connected', async () => {
    const t = tenants({ A: undefined });
    expect(await balance(t.tenants, installation('A', 1))).toContain('not connected');
    expect(t.made).toEqual([]);
  });

  it('runs the payments feed of each connected installation in its own private channels, with its own key and token', async () => {
    const slack = await startSlackStandIn({ teamId: 'A', botToken: 'xoxb-A' });
    slack.tokens.set('xoxb-B', { team_id: 'B' });
    slack.conversations.set('G0FIN', { id: 'G0FIN', is_private: true });
    slack.conversations.set('C0ALL', { id: 'C0ALL', is_private: false });
    const t = tenants({ A: OTHER_KEY, B: sandbox.apiKey }, { slackApiUrl: slack.apiUrl });
    const feedCommand = (id: string, text: string, channel: string) =>
      ask(t.tenants, installation(id, 1), '/balance', text, `xoxb-${id}`, channel);
    const asked = sandbox.requests.length;
    // The same channel id in two installations is two channels: a feed in each.
    expect(await feedCommand('A', 'subscribe', 'G0FIN')).toContain('the payments feed is on in this channel');
    expect(await feedCommand('B', 'subscribe 18:30 Europe/Berlin', 'G0FIN')).toContain(
      'the payments feed is on in this channel',
    );
    const starts = slack.calls.filter((c) => c.method === 'chat.postMessage');
    expect(starts.map((c) => [c.token, JSON.stringify(c.args).includes('Monero')])).toEqual([
      ['xoxb-A', true],
      ['xoxb-B', false],
    ]);
    expect(new Set(sandbox.requests.slice(asked).map((q) => q.authorization))).toEqual(
      new Set([`Token ${OTHER_KEY}`, `Token ${sandbox.apiKey}`]),
    );
    // Each lists its own; nobody lists public channels for a workspace of many.
    const listed = await feedCommand('B', 'subscriptions', 'G0FIN');
    expect(listed).toContain('18:30 Europe/Berlin');
    expect(listed).not.toContain('09:00 UTC');
    const publicOne = await feedCommand('A', 'subscribe', 'C0ALL');
    expect(publicOne).toContain('The payments feed needs a private channel');
    expect(publicOne).not.toContain('BALANCE_ALLOWED_CHANNELS');
    expect(await feedCommand('A', 'unsubscribe', 'G0FIN')).toContain(
      'The payments feed is off in this channel',
    );
    expect(await feedCommand('B', 'subscriptions', 'G0FIN')).toContain('18:30 Europe/Berlin');
    // What the feed queued to say goes out with the installation's own token, in its own lane.
    expect(
      await store.db
        .selectFrom('outbox')
        .select(['installation_id', 'lane'])
        .where('channel', '=', 'G0FIN')
        .execute(),
    ).toEqual([{ installation_id: 'A', lane: 'A/G0FIN' }]);
    expect(slack.problems).toEqual([]);
    await slack.close();
  });

  it('keys the events it has seen by installation: one event id in two workspaces is two events', async () => {
    const t = tenants({ A: OTHER_KEY, B: OTHER_KEY });
    for (const id of ['A', 'B']) {
      const context = {
        installation: installation(id, 1),
        botToken: `xoxb-${id}`,
      } as unknown as AllMiddlewareArgs['context'];
      const { args } = linkSharedArgs(['https://pay.example.com/nothing'], { eventId: 'Ev0SAME' });
      await (await t.tenants.handlersOf(context)).event.link_shared({ ...args, context } as never);
    }
    expect(t.seen).toEqual(['A:event:Ev0SAME', 'B:event:Ev0SAME']);
  });

  it('publishes the account alone when a not-connected installation’s Home is opened', async () => {
    const t = tenants({});
    const context = {
      installation: installation('B'),
      botToken: 'xoxb-b',
    } as unknown as AllMiddlewareArgs['context'];
    await (await t.tenants.handlersOf(context)).event.app_home_opened({
      event: { type: 'app_home_opened', user: 'U0OPENER', tab: 'home', channel: 'D0' },
      body: { team_id: 'B' },
      client: {},
      context,
    } as never);
    expect(t.homes).toEqual(['B:U0OPENER']);
  });

  it('opens the connect modal for `/balance connect`, connected or not', async () => {
    const t = tenants({ A: OTHER_KEY });
    await balance(t.tenants, installation('A', 1), ' Connect ');
    await balance(t.tenants, installation('B'), 'connect');
    expect(t.connects).toEqual(['U0ASKER', 'U0ASKER']);
  });

  it('refuses a request authorized without a bot token', async () => {
    const t = tenants({ A: OTHER_KEY });
    const context = { installation: installation('A', 1) } as unknown as AllMiddlewareArgs['context'];
    await expect(t.tenants.handlersOf(context)).rejects.toThrow('without a bot token');
  });

  it('publishes the account alone as the Home of an installation without a payment account', async () => {
    const t = tenants({});
    const context = {
      installation: installation('B'),
      botToken: 'xoxb-b',
    } as unknown as AllMiddlewareArgs['context'];
    await t.tenants.publishHome(context, installation('B'), {} as never, 'U0SOMEONE');
    expect(t.homes).toEqual(['B:U0SOMEONE']);
  });

  it('tags every log line and metric of an installation’s requests with it, and never logs its key', async () => {
    const t = tenants({ T0ONE: OTHER_KEY });
    await balance(t.tenants, installation('T0ONE', 1));
    await balance(t.tenants, installation('T0NEW'));
    expect(t.requests).toEqual(['T0ONE:command:/balance:ok', 'T0NEW:command:/balance:not_connected']);
    const line = t.logs.lines.find((l) => l.name === '/balance');
    expect(line).toMatchObject({ installation: 'T0ONE', outcome: 'ok' });
    expect(t.logs.raw.join('\n')).not.toContain(OTHER_KEY);
  });
});

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
    keys.T0ONE = sandbox.apiKey;
    expect(await t.tenants.watchesOf(ID.ONE)).toBeDefined();
    expect(t.made).toEqual([OTHER_KEY, sandbox.apiKey]);
  });

  it('serves an installation whose key the service rejects for one check a minute, all instances together', async () => {
    let now = 5_000_000;
    const summaries = { T0BAD: installation('T0BAD', 1) };
    const [one, two] = [0, 1].map(() =>
      tenants({ T0BAD: 'a-rejected-key' }, { summaries, clock: () => now }),
    );
    if (!one || !two) throw new Error('two instances');
    expect(await one.tenants.watchesOf(ID.BAD)).toBeDefined();
    await serviceState(store, one.logs.logger, { installation: ID.BAD }).markKeyRejected(now);
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
    await serviceState(store, one.logs.logger, { installation: ID.BAD }).markKeyAccepted();
    expect(await served()).toBe(4);
  });

  it('posts with the part a request rebuilt for a rotated token, not the one it resolved before', async () => {
    const inst = installation('T0ONE', 1);
    const t = tenants({ T0ONE: OTHER_KEY }, { summaries: { T0ONE: inst } });
    /** The token the installation's messages go out with now (any call through its poster). */
    const posting = async () => {
      await (await t.tenants.posterOf(ID.ONE))?.conversation('C0TOKEN').catch(() => undefined);
      return anySlack.calls.findLast((c) => c.method === 'conversations.info')?.token;
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
      { T0WATCH: sandbox.apiKey },
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
    sandbox.addMerchant(FEED_KEY, balanceOf('1'));
    let now = 2_000_000;
    const clock = () => now;
    const stored = createInstallations(store, createSealer({ current: KEY }), clock);
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
      store,
      gate: serviceState(store, t.logs.logger, { installation: ONE_WORKSPACE }),
      pollSeconds: 60,
      endedRetentionDays: RETENTION_DAYS,
      feedOf: t.tenants.feedOf,
      digestsOf: t.tenants.digestsOf,
    });
    const outbox = leased(
      outboxJob({
        store,
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

    sandbox.addMerchant(FEED_KEY, balanceOf('1.5'));
    now += 60_000;
    await tick();
    expect(said().at(-1)).toContain('received *+0.5* XMR');

    sandbox.failNext({ kind: 'status', status: 401 });
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

describe('any interleaving of requests from several installations', () => {
  /** Merchant i: its own key, a balance in its own currency, and an invoice of the one shared id. */
  const merchant = (i: number) => ({
    key: `merchant-${i}-property-key-0a1b2c`,
    currency: `COIN${i}X`,
    shop: `Shop number ${i}`,
  });
  const SHARED_INVOICE = '7e57ab1e-0000-4000-8000-00000000abcd';
  beforeAll(() => {
    for (let i = 0; i < 5; i += 1) {
      const m = merchant(i);
      const [template] = demoInvoices(sandbox.payUrl);
      sandbox.addMerchant(m.key, {
        balances: [{ id: m.currency, title: m.currency, balance: num(`${i}.5`) }],
        invoices: [
          {
            ...(template as WireInvoice),
            id: SHARED_INVOICE,
            shop: { title: m.shop, successUrl: null, failUrl: null },
          },
        ],
      });
    }
  });

  it('answers each request with its own installation’s money only, whatever the order, rotations and feeds included', async () => {
    const slack = await startSlackStandIn({ teamId: 'T0', botToken: 'xoxb-T0-0' });
    slack.conversations.set('G0FIN', { id: 'G0FIN', is_private: true });
    const step = fc.record({
      who: fc.nat({ max: 4 }),
      what: fc.constantFrom('balance', 'invoice', 'feed', 'rotate'),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 5 }),
        fc.array(step, { minLength: 1, maxLength: 12 }),
        async (n, steps) => {
          const keys = Object.fromEntries(Array.from({ length: n }, (_, i) => [`T${i}`, merchant(i).key]));
          const t = tenants(keys, { max: 3, slackApiUrl: slack.apiUrl });
          await store.db.deleteFrom('feed_subscriptions').execute();
          const posted = slack.calls.length;
          const tokens = Array.from({ length: n }, (_, i) => `xoxb-T${i}-0`);
          const answers = await Promise.all(
            steps.map(async ({ who, what }, k) => {
              const i = who % n;
              const inst = installation(`T${i}`, 1);
              if (what === 'rotate') {
                tokens[i] = `xoxb-T${i}-${k + 1}`;
                return undefined;
              }
              const text = { balance: '', invoice: SHARED_INVOICE, feed: 'subscribe' }[what];
              const reply = await ask(
                t.tenants,
                inst,
                what === 'invoice' ? '/invoice' : '/balance',
                text,
                tokens[i],
                what === 'feed' ? 'G0FIN' : 'C0SUPPORT',
              );
              return { i, what, reply };
            }),
          );
          for (const answer of answers) {
            if (!answer) continue;
            const own = merchant(answer.i);
            if (answer.what === 'feed')
              expect(answer.reply).toMatch(/the payments feed is on|already receives the payments feed/);
            else expect(answer.reply).toContain(answer.what === 'balance' ? own.currency : own.shop);
            for (let j = 0; j < n; j += 1) {
              if (j === answer.i) continue;
              expect(answer.reply).not.toContain(merchant(j).currency);
              expect(answer.reply).not.toContain(merchant(j).shop);
            }
          }
          // Each feed's first message went to the channel with its own installation's token, with its own balance.
          const feeds = slack.calls.slice(posted).filter((c) => c.method === 'chat.postMessage');
          expect(feeds).toHaveLength(
            new Set(answers.filter((a) => a?.what === 'feed').map((a) => a?.i)).size,
          );
          for (const call of feeds) {
            const i = Number(/^xoxb-T(\d)-/.exec(call.token ?? '')?.[1]);
            const text = JSON.stringify(call.args);
            expect(text).toContain(merchant(i).currency);
            for (let j = 0; j < n; j += 1) if (j !== i) expect(text).not.toContain(merchant(j).currency);
          }
          expect(t.tenants.size).toBeLessThanOrEqual(3);
        },
      ),
      { numRuns: 40 },
    );
    expect(slack.problems).toEqual([]);
    await slack.close();
  });
});
