import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBot } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { fetchIdentity } from '../src/installations/one.js';
import type { Bot } from '../src/lifecycle.js';
import { createMetrics } from '../src/metrics.js';
import { CircuitBreaker, createHealth, createPaymentsClient } from '../src/payments/index.js';
import { Pacer } from '../src/payments/pacer.js';
import { DEMO_INVOICE_IDS } from '../src/sandbox/data.js';
import { type Sandbox, startSandbox } from '../src/sandbox/server.js';
import { openStore, type Store } from '../src/store/database.js';
import {
  ALLOWED_USERS,
  type Answers,
  BALANCE,
  CHANGE,
  NOBODY,
  PEOPLE,
  type Person,
  READ,
  SHAPES,
} from './support/access-people.js';
import { visibleText } from './support/block-kit.js';
import { captureLogs } from './support/bolt.js';
import {
  blockActionsBody,
  commandBody,
  eventBody,
  functionExecutedBody,
  messageActionBody,
  postToBot,
} from './support/slack-requests.js';
import { type SlackStandIn, startSlackStandIn } from './support/slack-stand-in.js';

/**
 * Issue 22 §1–§4: one access decision, asked by every surface. The bot as main.ts assembles it,
 * signed requests over HTTP, Slack's directory (users.info) answered by the stand-in, and the
 * same people on every surface (test/support/access-people.ts; issue 37 added the guests of the
 * workspace itself): the answers must agree everywhere, whichever way Slack describes the
 * install in auth.test.
 */
const BOT_TOKEN = 'xoxb-access-test-token';
const SECRET = 'access-test-signing-secret';
const { open: OPEN, paid: PAID } = DEMO_INVOICE_IDS;

let sandbox: Sandbox;
let pool: Pool;
let dir: string;
beforeAll(async () => {
  sandbox = await startSandbox();
  pool = new Pool(sandbox.url);
  dir = mkdtempSync(join(tmpdir(), 'bot-access-'));
});
afterAll(async () => {
  await pool.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

async function standIn(authTest: Record<string, unknown>) {
  const slack = await startSlackStandIn({ teamId: 'T0HOME', botToken: BOT_TOKEN, authTest });
  for (const p of Object.values(PEOPLE))
    slack.people.set(p.user, {
      team_id: p.team,
      enterprise_user: { enterprise_id: p.enterprise },
      ...p.flags,
    });
  return slack;
}

const configFor = (slack: SlackStandIn) =>
  loadConfig({
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: slack.apiUrl,
    PAYMENT_API_URL: sandbox.url,
    PAYMENT_API_KEY: sandbox.apiKey,
    PAYMENT_PAY_URL: sandbox.payUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    BALANCE_ALLOWED_USERS: ALLOWED_USERS,
  });

describe('auth.test, in both shapes', () => {
  it.each([
    ['a workspace', {}, { teamId: 'T0HOME', enterpriseId: undefined, enterpriseInstall: false }],
    [
      'a workspace of an organisation',
      { enterprise_id: 'E0ORG' },
      { teamId: 'T0HOME', enterpriseId: 'E0ORG', enterpriseInstall: false },
    ],
    [
      'an organisation-wide install, naming the organisation as its team',
      { team_id: 'E0ORG', enterprise_id: 'E0ORG', is_enterprise_install: true },
      { teamId: 'E0ORG', enterpriseId: 'E0ORG', enterpriseInstall: true },
    ],
    [
      'an organisation-wide install naming no team',
      { team_id: undefined, enterprise_id: 'E0ORG', is_enterprise_install: true },
      { teamId: 'E0ORG', enterpriseId: 'E0ORG', enterpriseInstall: true },
    ],
  ])('%s', async (_label, authTest, identity) => {
    const slack = await standIn(authTest);
    try {
      expect(await fetchIdentity(configFor(slack), captureLogs().logger)).toStrictEqual({
        ...identity,
        botUserId: 'U0BOT',
        botId: 'B0BOT',
      });
    } finally {
      await slack.close();
    }
  });

  it('refuses an organisation-wide answer that names no organisation', async () => {
    const slack = await standIn({ team_id: undefined, is_enterprise_install: true });
    try {
      await expect(fetchIdentity(configFor(slack), captureLogs().logger)).rejects.toThrow(
        'auth.test did not say which workspace and bot the token belongs to',
      );
    } finally {
      await slack.close();
    }
  });
});

describe.each(SHAPES)('the same people on every surface, installed as %s', (_label, authTest) => {
  let slack: SlackStandIn;
  let store: Store;
  let bot: Bot;
  let base = '';
  const logs = captureLogs([BOT_TOKEN, SECRET]);

  beforeAll(async () => {
    slack = await standIn(authTest);
    store = await openStore({ kind: 'sqlite', path: join(dir, `${String(authTest.team_id)}.sqlite`) });
    const config = configFor(slack);
    const breaker = new CircuitBreaker();
    const metrics = createMetrics();
    const payments = createPaymentsClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.apiKey,
      dispatcher: pool,
      userAgent: 'access-test',
      timeoutMs: 2000,
      background: { dispatcher: pool, pace: new Pacer(50).take },
      breaker,
    });
    bot = createBot(
      {
        tenancy: 'one',
        config,
        payments,
        health: createHealth(breaker),
        identity: await fetchIdentity(config, logs.logger),
      },
      { logger: logs.logger, store, metrics, breaker },
    );
    base = `http://127.0.0.1:${(await bot.start()).port}`;
  });
  afterAll(async () => {
    await bot.stop(1000);
    await store.close();
    await slack.close();
  });

  const send = (body: string, contentType?: string) =>
    postToBot(`${base}/slack/events`, body, SECRET, contentType ? { contentType } : {});

  /** Sends a request and resolves with the outcome its request log line records. */
  async function outcome(send: () => Promise<unknown>, msg: string, user?: string): Promise<string> {
    const mark = logs.raw.length;
    await send();
    let found: Record<string, unknown> | undefined;
    await expect
      .poll(() => {
        found = logs.lines.slice(mark).find((l) => l.msg === msg && (user === undefined || l.user === user));
        return found;
      })
      .toBeDefined();
    return String(found?.outcome);
  }

  const command = (p: Person, name: '/balance' | '/invoice', text: string, channel = 'C0SUPPORT') =>
    outcome(
      () =>
        send(
          commandBody({
            command: name,
            text,
            response_url: slack.responseUrl(),
            team_id: p.team,
            user_id: p.user,
            channel_id: channel,
          }),
        ),
      `command ${name}`,
      p.user,
    );

  const click = (
    p: Person,
    actionId: string,
    value: string,
    where: { channel?: string; ephemeral?: boolean } = {},
  ) =>
    outcome(
      () =>
        send(
          blockActionsBody({
            actionId,
            value,
            responseUrl: slack.responseUrl(),
            user: p.user,
            userTeam: p.team,
            ...where,
          }),
        ),
      `action ${actionId.replace(/:\d+$/, '')}`,
      p.user,
    );

  /** A private channel with the bot in it, as conversations.info describes it. */
  const privateChannel = (id: string) => {
    slack.conversations.set(id, { id, is_private: true });
    return id;
  };
  const activeWatchIn = async (channel: string) =>
    (
      await store.db
        .selectFrom('watches')
        .select('id')
        .where('channel_id', '=', channel)
        .where('state', '=', 'active')
        .executeTakeFirstOrThrow()
    ).id;

  async function home(p: Person): Promise<string> {
    const before = slack.homeViews.filter((v) => v.userId === p.user).length;
    await send(
      eventBody({ type: 'app_home_opened', user: p.user, channel: 'D0HOME', tab: 'home', event_ts: '1.2' }),
      'application/json',
    );
    await expect.poll(() => slack.homeViews.filter((v) => v.userId === p.user).length).toBe(before + 1);
    const text = visibleText(slack.homeViews.filter((v) => v.userId === p.user).at(-1)?.view);
    if (text.includes('0.0123456 BTC')) return 'ok';
    if (text.includes('`BALANCE_ALLOWED_USERS`')) return 'user_not_allowed';
    if (text.includes('not its guests')) return 'guest';
    if (text.includes('only for members of this workspace')) return 'other_workspace';
    return `unexpected: ${text.slice(0, 200)}`;
  }

  async function step(n: number): Promise<string> {
    const id = `Fx0STEP${n}`;
    await send(functionExecutedBody('get_invoice', { invoice: OPEN }, id), 'application/json');
    await expect.poll(() => slack.functionResults.find((r) => r.executionId === id)).toBeDefined();
    const result = slack.functionResults.find((r) => r.executionId === id);
    return result?.method === 'functions.completeSuccess' ? 'ok' : String(result?.error);
  }

  const SURFACES: [string, Answers, (p: Person, n: number) => Promise<string>][] = [
    ['/balance', BALANCE, (p) => command(p, '/balance', '')],
    ['/balance subscriptions', BALANCE, (p) => command(p, '/balance', 'subscriptions')],
    [
      '/balance subscribe',
      BALANCE,
      (p, n) => command(p, '/balance', 'subscribe', privateChannel(`G0SUB${n}`)),
    ],
    [
      '/balance unsubscribe',
      BALANCE,
      async (p, n) => {
        const channel = privateChannel(`G0UNSUB${n}`);
        expect(await command(PEOPLE.allowed, '/balance', 'subscribe', channel)).toBe('ok');
        return command(p, '/balance', 'unsubscribe', channel);
      },
    ],
    ['/invoice <id>', READ, (p) => command(p, '/invoice', OPEN)],
    ['/invoice watching', READ, (p) => command(p, '/invoice', 'watching')],
    ['/invoice watch', CHANGE, (p, n) => command(p, '/invoice', `watch ${OPEN}`, `C0WATCH${n}`)],
    [
      '/invoice unwatch',
      CHANGE,
      async (p, n) => {
        expect(await command(PEOPLE.allowed, '/invoice', `watch ${OPEN}`, `C0UNWATCH${n}`)).toBe('ok');
        return command(p, '/invoice', `unwatch ${OPEN}`, `C0UNWATCH${n}`);
      },
    ],
    ['Refresh of a card the channel sees', CHANGE, (p) => click(p, 'refresh_invoice', PAID)],
    ['Refresh of a private card', READ, (p) => click(p, 'refresh_invoice', PAID, { ephemeral: true })],
    ['Watch', CHANGE, (p, n) => click(p, 'watch_invoice', OPEN, { channel: `C0WATCHB${n}` })],
    [
      'Stop watching',
      CHANGE,
      async (p, n) => {
        const channel = `C0STOP${n}`;
        expect(await command(PEOPLE.allowed, '/invoice', `watch ${OPEN}`, channel)).toBe('ok');
        return click(p, 'stop_watch', await activeWatchIn(channel), { channel });
      },
    ],
    [
      'Share in thread',
      CHANGE,
      (p, n) =>
        click(p, 'share_invoice:0', `${OPEN} 1700000000.000500`, { channel: `C0SHARE${n}`, ephemeral: true }),
    ],
    [
      'Check payment status (message shortcut)',
      READ,
      (p) =>
        outcome(
          () =>
            send(
              messageActionBody({
                callbackId: 'check_payment',
                responseUrl: slack.responseUrl(),
                message: { ts: '1700000000.000500', text: OPEN },
                user: p.user,
                userTeam: p.team,
              }),
            ),
          'shortcut check_payment',
          p.user,
        ),
    ],
    [
      'a pasted payment link (unfurl)',
      READ,
      (p) =>
        outcome(
          () =>
            send(
              eventBody({
                type: 'link_shared',
                channel: 'C0SUPPORT',
                user: p.user,
                message_ts: '1700000000.000200',
                event_ts: '1700000000.000200',
                links: [{ domain: new URL(sandbox.payUrl).hostname, url: `${sandbox.payUrl}/pay/${OPEN}` }],
              }),
              'application/json',
            ),
          'event link_shared',
          p.user,
        ),
    ],
    ['App Home: the balance', BALANCE, (p) => home(p)],
    ['Get invoice workflow step (no person)', NOBODY, (_p, n) => step(n)],
  ];

  it('gives each of them the same answer on every surface', async () => {
    let n = 0;
    const seen: Record<string, Partial<Answers>> = {};
    const expected: Record<string, Answers> = {};
    for (const [surface, answers, run] of SURFACES) {
      expected[surface] = answers;
      seen[surface] = {};
      for (const [name, person] of Object.entries(PEOPLE)) {
        n += 1;
        (seen[surface] as Partial<Answers>)[name as keyof Answers] = await run(person, n);
      }
    }
    expect(seen).toEqual(expected);
    expect(slack.problems).toEqual([]);
  }, 60_000);

  it('looks people up in Slack’s directory only when the answer depends on it, once each', async () => {
    const asked = slack.calls.filter((c) => c.method === 'users.info').map((c) => c.args.user);
    // The App Home asks for everyone (its event names no team); requests from the home workspace
    // answer the organisation rule from the request itself.
    expect(new Set(asked)).toEqual(new Set(Object.values(PEOPLE).map((p) => p.user)));
    expect(asked.length).toBe(new Set(asked).size);
  });
});
