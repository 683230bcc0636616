import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO_INVOICE_IDS, demoInvoices, num, type WireInvoice } from '../../src/sandbox/data.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { visibleText } from '../support/block-kit.js';
import { freshDatabase } from '../support/postgres-server.js';
import {
  blockActionsBody,
  commandBody,
  linkSharedBody,
  messageActionBody,
  postToBot,
} from '../support/slack-requests.js';
import { type SlackStandIn, startSlackStandIn } from '../support/slack-stand-in.js';
import {
  addToSlackLink,
  homeClickBody,
  inWorkspace,
  keySubmissionBody,
  workspaceEventBody,
} from '../support/workspace-requests.js';
import { askBot, type BotProcess, SECRETS, startBot, until } from './harness.js';

/**
 * Many workspaces, end to end: the real bot (`node dist/main.js`) with an OAuth client and no bot
 * token, installed by two workspaces through /slack/install → /slack/oauth_redirect on the Slack
 * stand-in, with its installations in SQLite and in PostgreSQL.
 */

/** Workspace one's merchant: its own key, balance and invoice, which workspace two never sees. */
const ONE_KEY = 'merchant-one-e2e-key-6d5c4b3a2910';
const ONE_INVOICE = 'a1a1a1a1-1111-4aaa-8bbb-0123456789ab';
const oneInvoice = (payUrl: string): WireInvoice => ({
  ...(demoInvoices(payUrl)[0] as WireInvoice),
  id: ONE_INVOICE,
  amount: num('31.415'),
  title: 'Espresso machine service',
  link: `${payUrl}/pay/${ONE_INVOICE}`,
  shop: { title: 'One Coffee Roasters', successUrl: null, failUrl: null },
});
/** What only each merchant's answers contain: its balance's currency, then its invoice's shop. */
const ONE_MONEY = ['Monero', 'One Coffee Roasters'] as const;
const TWO_MONEY = ['Bitcoin', 'Acme Hardware Store'] as const;

const CLIENT = { id: '1111.2222', secret: 'e2e-client-secret-8d7c6b', state: 'e2e-state-secret-5a4b3c' };
const KEY = randomBytes(32).toString('base64');
interface Workspace {
  team: string;
  installer: string;
  token: string;
  code: string;
}
const WORKSPACES: Record<'one' | 'two', Workspace> = {
  one: { team: 'T0ONE', installer: 'U0ONEADMIN', token: 'xoxb-one-e2e-secret-token-1a2b', code: 'code-one' },
  two: { team: 'T0TWO', installer: 'U0TWOADMIN', token: 'xoxb-two-e2e-secret-token-3c4d', code: 'code-two' },
};

let sandbox: Sandbox;
let slack: SlackStandIn;
let bot: BotProcess;
let database: string;

const stores = {
  SQLite: async () => `file:${join(mkdtempSync(join(tmpdir(), 'bot-workspaces-')), 'bot.sqlite')}`,
  PostgreSQL: async () => freshDatabase(inject('postgresUrl')),
};

/**
 * Everything the store holds of the installations, as it lies there: the SQLite file's bytes
 * and its write-ahead log's, or PostgreSQL's rows as text.
 */
async function stored(): Promise<string> {
  if (database.startsWith('file:')) {
    const path = database.slice('file:'.length);
    return [path, `${path}-wal`]
      .filter(existsSync)
      .map((f) => readFileSync(f).toString('latin1'))
      .join('');
  }
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  try {
    return JSON.stringify((await client.query('select * from installations')).rows);
  } finally {
    await client.end();
  }
}

const manyEnv = (databaseUrl: string, extra: Record<string, string> = {}) => ({
  SLACK_CLIENT_ID: CLIENT.id,
  SLACK_CLIENT_SECRET: CLIENT.secret,
  SLACK_STATE_SECRET: CLIENT.state,
  SLACK_SIGNING_SECRET: SECRETS.signingSecret,
  ENCRYPTION_KEY: KEY,
  SLACK_API_URL: slack.apiUrl,
  PAYMENT_API_URL: sandbox.url,
  PAYMENT_PAY_URL: sandbox.payUrl,
  DATABASE_URL: databaseUrl,
  LOG_LEVEL: 'debug',
  WATCH_POLL_SECONDS: '1',
  BALANCE_POLL_SECONDS: '1',
  ...extra,
});

/** What oauth.v2.access answers for the workspace's code; `extra` adds token rotation or makes it organisation-wide. */
function offerCode(w: Workspace, extra: Record<string, unknown> = {}): void {
  // Slack's directory knows the installer as a member of their own workspace (every request asks it whether they are a guest).
  if (!slack.people.has(w.installer)) slack.people.set(w.installer, { team_id: w.team });
  slack.oauthCodes.set(w.code, {
    access_token: w.token,
    scope: 'commands,chat:write,users:read',
    bot_user_id: `U0BOT${w.team.slice(3)}`,
    team: { id: w.team, name: w.team },
    enterprise: null,
    is_enterprise_install: false,
    authed_user: { id: w.installer },
    ...extra,
  });
}

/** Opens /slack/install as a browser does: the Add to Slack link's state and the cookie that goes with it. */
async function startInstall(): Promise<{ state: string; cookie: string }> {
  const page = await fetch(`${bot.url}/slack/install`);
  const html = await page.text();
  const link = addToSlackLink(html);
  const state = link?.searchParams.get('state') ?? '';
  // Slack's button, drawn in the page: nothing loaded from another host.
  expect(html).toContain('Add to <b>Slack</b>');
  expect(html).not.toMatch(/\bsrc=|url\(|<link|<script/);
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  expect(link?.searchParams.get('client_id')).toBe(CLIENT.id);
  expect(state).not.toBe('');
  return { state, cookie };
}

const redirect = (query: Record<string, string>, cookie?: string) =>
  fetch(`${bot.url}/slack/oauth_redirect?${new URLSearchParams(query)}`, {
    headers: cookie ? { cookie } : {},
  });

/** Installs `w` through /slack/install and /slack/oauth_redirect; `extra` goes into its oauth.v2.access answer. */
async function install(w: Workspace, extra: Record<string, unknown> = {}): Promise<void> {
  offerCode(w, extra);
  const { state, cookie } = await startInstall();
  const done = await redirect({ code: w.code, state }, cookie);
  expect(done.status).toBe(200);
  expect(await done.text()).toContain('Crypto Payments is installed');
}

const balanceFrom = (w: Workspace, user: string = w.installer, at: BotProcess = bot) =>
  askBot(at, slack, (response_url) =>
    commandBody({ command: '/balance', text: '', response_url, team_id: w.team, user_id: user }),
  );

/** A request Bolt refuses at authorization is acked empty, and nothing follows. */
const refusedBalance = async (w: Workspace) => {
  const body = commandBody({
    command: '/balance',
    text: '',
    response_url: slack.responseUrl(),
    team_id: w.team,
    user_id: w.installer,
  });
  const ack = await postToBot(`${bot.url}/slack/events`, body, SECRETS.signingSecret);
  expect(ack.status).toBe(200);
  expect(ack.body).toBe('');
};

const event = (w: Workspace, payload: Record<string, unknown>) =>
  postToBot(`${bot.url}/slack/events`, workspaceEventBody(w, payload), SECRETS.signingSecret, {
    contentType: 'application/json',
  });

describe.each(Object.entries(stores))('many workspaces, on %s', (name, open) => {
  beforeAll(async () => {
    sandbox = await startSandbox();
    slack = await startSlackStandIn({
      teamId: 'T0HOME',
      botToken: SECRETS.botToken,
      clientId: CLIENT.id,
      clientSecret: CLIENT.secret,
    });
    database = await open();
    bot = await startBot(manyEnv(database));
  });

  afterAll(async () => {
    await bot?.stop();
    await slack?.close();
    await sandbox?.close();
  });

  describe('many workspaces: installing', () => {
    it('installs two workspaces through Add to Slack, each welcomed with its own token', async () => {
      await install(WORKSPACES.one);
      await install(WORKSPACES.two);
      const exchanges = slack.calls.filter((c) => c.method === 'oauth.v2.access');
      expect(exchanges.map((c) => c.args.code)).toEqual(['code-one', 'code-two']);
      for (const w of Object.values(WORKSPACES)) {
        const dm = slack.messages.find((m) => m.channel === w.installer);
        expect(dm?.text).toContain('Thanks for installing');
        const call = slack.calls.find(
          (c) => c.method === 'chat.postMessage' && c.args.channel === w.installer,
        );
        expect(call?.token).toBe(w.token);
      }
      expect(
        JSON.stringify(slack.messages.find((m) => m.channel === WORKSPACES.one.installer)?.blocks),
      ).toContain('Home');
    });

    it('refreshes a rotating token before it expires, keeps the new one sealed, and calls Slack with it', async () => {
      const three: Workspace = {
        team: 'T0THREE',
        installer: 'U0THREEADMIN',
        token: 'xoxe.xoxb-three-first-token-5e6f',
        code: 'code-three',
      };
      await install(three, { refresh_token: 'xoxe-1-three-first-refresh-7a8b', expires_in: 60 });

      await event(three, { type: 'app_home_opened', user: three.installer, channel: 'D0', tab: 'home' });
      await until(() => slack.calls.some((c) => c.args.grant_type === 'refresh_token'), 'the refresh');
      await until(
        () => slack.calls.some((c) => c.method === 'views.publish' && c.args.user_id === three.installer),
        'the Home tab',
      );
      const publish = slack.calls.find(
        (c) => c.method === 'views.publish' && c.args.user_id === three.installer,
      );
      expect(publish?.token).toMatch(/^xoxe\.xoxb-rotated-/);
      const text = await stored();
      expect(text).toContain('T0THREE');
      for (const secret of [publish?.token ?? '', 'xoxe-1-three-first-refresh-7a8b', three.token])
        expect(text).not.toContain(secret);

      // The refreshed token is the one kept: the next request needs no refresh.
      const refreshes = slack.calls.filter((c) => c.args.grant_type === 'refresh_token').length;
      expect(JSON.stringify((await balanceFrom(three)).reply)).toContain('not connected');
      expect(slack.calls.filter((c) => c.args.grant_type === 'refresh_token')).toHaveLength(refreshes);
    });

    it('stores an organisation-wide install under the organisation and serves each of its workspaces', async () => {
      const org: Workspace = {
        team: 'E0GRID',
        installer: 'U0ORGADMIN',
        token: 'xoxb-org-e2e-secret-token-9f0a',
        code: 'code-org',
      };
      await install(org, {
        team: null,
        enterprise: { id: 'E0GRID', name: 'Grid' },
        is_enterprise_install: true,
      });
      const { reply } = await askBot(bot, slack, (response_url) =>
        commandBody({
          command: '/invoice',
          text: 'x',
          response_url,
          team_id: 'T0GRIDWS',
          enterprise_id: 'E0GRID',
          is_enterprise_install: 'true',
          user_id: 'U0SOMEONE',
        }),
      );
      expect(JSON.stringify(reply)).toContain('<@U0ORGADMIN>');
      expect(await stored()).toContain('E0GRID');
      expect(await stored()).not.toContain(org.token);
    });

    it('refreshes a rotating token once however many requests need it at the same moment, on every instance', async () => {
      const four: Workspace = {
        team: 'T0FOUR',
        installer: 'U0FOURADMIN',
        token: 'xoxe.xoxb-four-first-token-1c2d',
        code: 'code-four',
      };
      const firstRefresh = 'xoxe-1-four-first-refresh-3e4f';
      await install(four, { refresh_token: firstRefresh, expires_in: 60 });
      // PostgreSQL: a second instance on the same database asks at the same moment.
      const second = name === 'PostgreSQL' ? await startBot(manyEnv(database)) : undefined;
      try {
        const instances = second ? [bot, second] : [bot];
        const replies = await Promise.all(
          instances.flatMap((at) => Array.from({ length: 4 }, () => balanceFrom(four, four.installer, at))),
        );
        for (const { reply } of replies) expect(JSON.stringify(reply)).toContain('not connected');
        expect(slack.calls.filter((c) => c.args.refresh_token === firstRefresh)).toHaveLength(1);
      } finally {
        await second?.stop();
      }
    });

    it('answers the operator’s routes as in one-workspace mode', async () => {
      expect((await fetch(`${bot.url}/healthz`)).status).toBe(200);
      const metrics = await fetch(`${bot.url}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('slackbot_');
    });

    it('refuses a forged state, a state without its cookie and a replayed one: nothing installed, no code exchanged', async () => {
      const before = slack.calls.filter((c) => c.method === 'oauth.v2.access').length;
      offerCode({ ...WORKSPACES.one, code: 'code-forged' });
      const { state, cookie } = await startInstall();
      const forged = await redirect({ code: 'code-forged', state: `${state.slice(0, -4)}AAAA` }, cookie);
      const noCookie = await redirect({ code: 'code-forged', state });
      for (const response of [forged, noCookie]) {
        expect(response.status).toBe(400);
        const page = await response.text();
        expect(page).toContain('The app was not installed');
        expect(page).toContain('href="/slack/install"');
      }
      expect(slack.calls.filter((c) => c.method === 'oauth.v2.access')).toHaveLength(before);

      // Used once, properly; the same state and cookie again are refused before any exchange.
      expect((await redirect({ code: 'code-forged', state }, cookie)).status).toBe(200);
      const replayed = await redirect({ code: 'code-forged', state }, cookie);
      expect(replayed.status).toBe(400);
      expect(slack.calls.filter((c) => c.method === 'oauth.v2.access')).toHaveLength(before + 1);
    });

    it('stores no token in plain text (SQLite: not in the file, not in its write-ahead log)', async () => {
      const bytes = await stored();
      expect(bytes).toContain('T0ONE');
      for (const w of Object.values(WORKSPACES)) expect(bytes).not.toContain(w.token);
    });
  });

  describe('many workspaces: before a payment account is connected', () => {
    it('answers /balance privately in each workspace, naming its own installer, calling no payment service', async () => {
      const [one, two] = await Promise.all([
        balanceFrom(WORKSPACES.one, 'U0MEMBER'),
        balanceFrom(WORKSPACES.two, 'U0MEMBER'),
      ]);
      expect(one.reply.response_type).toBe('ephemeral');
      expect(JSON.stringify(one.reply)).toContain('not connected');
      expect(JSON.stringify(one.reply)).toContain(`<@${WORKSPACES.one.installer}>`);
      expect(JSON.stringify(one.reply)).not.toContain(WORKSPACES.two.installer);
      expect(JSON.stringify(two.reply)).toContain(`<@${WORKSPACES.two.installer}>`);
      expect(sandbox.requests).toEqual([]);
    });

    it('publishes a Home tab saying so, with the workspace’s own token', async () => {
      const response = await event(WORKSPACES.two, {
        type: 'app_home_opened',
        user: 'U0MEMBER',
        channel: 'D0',
        tab: 'home',
      });
      expect(response.status).toBe(200);
      const isMembers = (c: (typeof slack.calls)[number]) =>
        c.method === 'views.publish' && c.args.user_id === 'U0MEMBER';
      await until(() => slack.calls.some(isMembers), 'the member’s Home tab');
      const publish = slack.calls.find(isMembers);
      expect(publish?.token).toBe(WORKSPACES.two.token);
      expect(JSON.stringify(publish?.args.view)).toContain('not connected');
    });

    it('gives a workspace that never installed the app Bolt’s authorization failure, logged without secrets', async () => {
      const stranger = { ...WORKSPACES.one, team: 'T0STRANGER' };
      const before = slack.calls.length;
      await refusedBalance(stranger);
      await until(
        () => bot.output.some((l) => l.includes('no installation for T0STRANGER')),
        'the authorization failure',
      );
      expect(slack.calls.slice(before).filter((c) => c.method !== 'auth.test')).toEqual([]);
    });
  });

  /** A modal's submission, form-encoded as Slack sends it. */
  const submitKey = (w: Workspace, user: string, apiKey: string) =>
    postToBot(`${bot.url}/slack/events`, keySubmissionBody(w, user, apiKey), SECRETS.signingSecret);

  const homeFor = async (w: Workspace, user: string) => {
    const before = slack.homeViews.length;
    await event(w, { type: 'app_home_opened', user, channel: 'D0', tab: 'home' });
    await until(
      () => slack.homeViews.slice(before).some((h) => h.userId === user),
      `the Home tab of ${user}`,
    );
    return JSON.stringify(slack.homeViews.slice(before).find((h) => h.userId === user)?.view);
  };

  describe('many workspaces: connecting the payment account', () => {
    const two = () => WORKSPACES.two;

    it('shows Connect payment account to the installer and admins only', async () => {
      slack.people.set('U0TWOBOSS', { team_id: WORKSPACES.two.team, is_admin: true });
      expect(await homeFor(two(), two().installer)).toContain('connect_payment_account');
      expect(await homeFor(two(), 'U0TWOBOSS')).toContain('connect_payment_account');
      const member = await homeFor(two(), 'U0MEMBER');
      expect(member).not.toContain('connect_payment_account');
      expect(member).toContain('not connected');
    });

    it('/balance connect opens the modal for the installer, and tells a member who can', async () => {
      const refused = await askBot(bot, slack, (response_url) =>
        commandBody({
          command: '/balance',
          text: 'connect',
          response_url,
          team_id: two().team,
          user_id: 'U0MEMBER',
        }),
      );
      expect(JSON.stringify(refused.reply)).toContain('Only the person who installed the app');
      expect(slack.modals).toHaveLength(0);
      await postToBot(
        `${bot.url}/slack/events`,
        commandBody({
          command: '/balance',
          text: 'connect',
          response_url: slack.responseUrl(),
          team_id: two().team,
          user_id: two().installer,
        }),
        SECRETS.signingSecret,
      );
      await until(() => slack.modals.length === 1, 'the modal');
      const [modal] = slack.modals;
      expect(modal?.token).toBe(two().token);
      expect(modal?.view).toMatchObject({ callback_id: 'payment_account' });
      expect(JSON.stringify(modal?.view)).toContain('"block_id":"api_key"');
    });

    it('shows a rejected key in the modal and keeps nothing', async () => {
      const response = await submitKey(two(), two().installer, 'not-the-merchants-key-0000');
      expect(response.json()).toMatchObject({
        response_action: 'errors',
        errors: { api_key: expect.stringContaining('rejected this key') },
      });
      expect(sandbox.requests.at(-1)?.authorization).toBe('Token not-the-merchants-key-0000');
      expect(JSON.stringify((await balanceFrom(two())).reply)).toContain('not connected');
    });

    it('shows a service that cannot be asked in the modal, within Slack’s 3 s, and keeps nothing', async () => {
      sandbox.failNext({ kind: 'hang' });
      const response = await submitKey(two(), two().installer, sandbox.apiKey);
      expect(response.ms).toBeLessThan(3000);
      expect(response.json()).toMatchObject({
        response_action: 'errors',
        errors: { api_key: expect.stringContaining('could not be checked') },
      });
      sandbox.clearFaults();
      expect(JSON.stringify((await balanceFrom(two())).reply)).toContain('not connected');
    });

    it('refuses a key submitted by a member, asking the service nothing and changing nothing', async () => {
      const asked = sandbox.requests.length;
      const response = await submitKey(two(), 'U0MEMBER', sandbox.apiKey);
      expect(response.json()).toMatchObject({
        response_action: 'errors',
        errors: { api_key: expect.stringContaining('Only the person') },
      });
      expect(sandbox.requests).toHaveLength(asked);
      expect(JSON.stringify((await balanceFrom(two())).reply)).toContain('not connected');
    });

    it('keeps a good key sealed, says who connected it and when, and never shows or logs it', async () => {
      const before = slack.homeViews.length;
      const response = await submitKey(two(), 'U0TWOBOSS', sandbox.apiKey);
      expect(response.status).toBe(200);
      expect(response.body).toBe('');
      await until(() => slack.homeViews.length > before, 'the Home tab updated');
      const home = JSON.stringify(slack.homeViews.at(-1)?.view);
      expect(home).toContain('Connected by <@U0TWOBOSS>');
      expect(home).toContain('disconnect_payment_account');
      expect(home).not.toContain(sandbox.apiKey);
      // Its balance is read with its key; workspace one is untouched.
      expect(JSON.stringify((await balanceFrom(two())).reply)).toContain('Bitcoin');
      expect(sandbox.requests.at(-1)?.authorization).toBe(`Token ${sandbox.apiKey}`);
      expect(JSON.stringify((await balanceFrom(WORKSPACES.one)).reply)).toContain('not connected');
      expect(await stored()).not.toContain(sandbox.apiKey);
      expect(bot.output.join('\n')).not.toContain(sandbox.apiKey);
    });
  });

  describe('many workspaces: installing again', () => {
    const two = () => WORKSPACES.two;

    it('hands nothing over when a member installs the app again: the account, its manager and its money stay', async () => {
      // Any member may run Add to Slack; Slack gives the same bot token back.
      await install({ ...two(), installer: 'U0MEMBER', code: 'code-two-again' });
      await until(() => slack.messages.some((m) => m.channel === 'U0MEMBER'), 'the member told');
      const told = JSON.stringify(slack.messages.find((m) => m.channel === 'U0MEMBER')?.blocks);
      expect(told).toContain('installed again');
      expect(told).toContain('managed by <@U0TWOBOSS>');

      const asked = sandbox.requests.length;
      const refused = await submitKey(two(), 'U0MEMBER', 'the-members-own-merchant-key-77aa');
      expect(refused.json()).toMatchObject({
        response_action: 'errors',
        errors: { api_key: expect.stringContaining('Only the person who connected') },
      });
      // An admin, but of another workspace: no more than a member here.
      slack.people.set('U0ELSEADMIN', { team_id: WORKSPACES.one.team, is_admin: true });
      expect((await submitKey(two(), 'U0ELSEADMIN', 'another-merchant-key-88bb')).json()).toMatchObject({
        response_action: 'errors',
      });
      expect(sandbox.requests).toHaveLength(asked);
      const memberHome = await homeFor(two(), 'U0MEMBER');
      expect(memberHome).not.toContain('connect_payment_account');
      expect(memberHome).toContain('Connected by <@U0TWOBOSS>');
      expect(JSON.stringify((await balanceFrom(two(), 'U0TWOBOSS')).reply)).toContain('Bitcoin');
      expect(sandbox.requests.at(-1)?.authorization).toBe(`Token ${sandbox.apiKey}`);
      // The first installer is still who installed it, and may manage it no more than before.
      expect(await homeFor(two(), 'U0TWOBOSS')).toContain('disconnect_payment_account');
    });

    it('lets no key check, however slow, open the breaker every workspace shares', async () => {
      // Anyone may install the app and submit keys: five checks the service does not answer in time.
      sandbox.failNext({ kind: 'hang' }, 5);
      const checks = await Promise.all(
        Array.from({ length: 5 }, (_, i) => submitKey(two(), 'U0TWOBOSS', `a-slow-key-to-check-${i}0000`)),
      );
      for (const check of checks)
        expect(check.json()).toMatchObject({
          errors: { api_key: expect.stringContaining('could not be checked') },
        });
      sandbox.clearFaults();
      // The workspace's own account is still read: the breaker is closed.
      expect(JSON.stringify((await balanceFrom(two(), 'U0TWOBOSS')).reply)).toContain('Bitcoin');
    });
  });

  describe('many workspaces: each reads its own money', () => {
    const one = () => WORKSPACES.one;
    const two = () => WORKSPACES.two;
    /** Workspace two's merchant is the sandbox's own (its demo data); one's is another. */
    const theirs = (w: Workspace) => (w === one() ? ONE_MONEY : TWO_MONEY);
    const others = (w: Workspace) => (w === one() ? TWO_MONEY : ONE_MONEY);
    const invoiceOf = (w: Workspace) => (w === one() ? ONE_INVOICE : DEMO_INVOICE_IDS.open);
    const linkOf = (w: Workspace) => `${sandbox.payUrl}/pay/${invoiceOf(w)}`;

    const command = (w: Workspace, name: '/balance' | '/invoice', text: string) =>
      askBot(bot, slack, (response_url) =>
        commandBody({ command: name, text, response_url, team_id: w.team, user_id: w.installer }),
      );
    const click = (w: Workspace, invoiceId: string) =>
      askBot(bot, slack, (responseUrl) =>
        inWorkspace(
          blockActionsBody({
            actionId: 'refresh_invoice',
            value: invoiceId,
            responseUrl,
            user: w.installer,
            ephemeral: true,
          }),
          w,
        ),
      );
    const shortcut = (w: Workspace) =>
      askBot(bot, slack, (responseUrl) =>
        inWorkspace(
          messageActionBody({
            callbackId: 'check_payment',
            responseUrl,
            user: w.installer,
            message: { ts: '1700000000.000300', text: `${ONE_INVOICE} and ${DEMO_INVOICE_IDS.open}` },
          }),
          w,
        ),
      );
    const unfurl = (w: Workspace) =>
      postToBot(
        `${bot.url}/slack/events`,
        inWorkspace(linkSharedBody([linkOf(w)], { eventId: `Ev${w.team}${Math.random()}` }), w),
        SECRETS.signingSecret,
        { contentType: 'application/json' },
      );

    it('connects the second workspace’s own account', async () => {
      sandbox.addMerchant(ONE_KEY, {
        balances: [{ id: 'XMR', title: 'Monero', balance: num('77.7777') }],
        invoices: [oneInvoice(sandbox.payUrl)],
      });
      // Slack's directory knows each installer as a member of their own workspace.
      for (const w of [one(), two()]) slack.people.set(w.installer, { team_id: w.team, is_admin: true });
      const response = await submitKey(one(), one().installer, ONE_KEY);
      expect(response.status).toBe(200);
      expect(response.body).toBe('');
      expect(await stored()).not.toContain(ONE_KEY);
    });

    it('answers interleaved commands, clicks, shortcuts, unfurls and Home tabs with each workspace’s own money, token and key', async () => {
      const asked = sandbox.requests.length;
      const calls = slack.calls.length;
      const rounds = [one(), two(), two(), one(), one(), two()];
      const replies = await Promise.all(
        rounds.flatMap((w) => [
          command(w, '/balance', '').then((r) => ({ w, what: 'balance', r: JSON.stringify(r.reply) })),
          command(w, '/invoice', invoiceOf(w)).then((r) => ({
            w,
            what: 'invoice',
            r: JSON.stringify(r.reply),
          })),
          command(w, '/invoice', invoiceOf(w === one() ? two() : one())).then((r) => ({
            w,
            what: 'the other’s invoice',
            r: JSON.stringify(r.reply),
          })),
          click(w, invoiceOf(w)).then((r) => ({ w, what: 'refresh', r: JSON.stringify(r.reply) })),
          shortcut(w).then((r) => ({ w, what: 'shortcut', r: JSON.stringify(r.reply) })),
        ]),
      );
      await Promise.all([unfurl(one()), unfurl(two())]);
      const homes = {
        one: await homeFor(one(), one().installer),
        two: await homeFor(two(), two().installer),
      };
      await until(() => slack.calls.filter((c) => c.method === 'chat.unfurl').length >= 2, 'both unfurls');

      for (const { w, what, r } of replies) {
        for (const mark of others(w)) expect(r, `${what} in ${w.team}`).not.toContain(mark);
        if (what === 'the other’s invoice') expect(r).toContain('Invoice not found');
        else if (what !== 'shortcut')
          expect(r, `${what} in ${w.team}`).toContain(theirs(w)[what === 'balance' ? 0 : 1]);
      }
      for (const [w, home] of [
        [one(), homes.one],
        [two(), homes.two],
      ] as const) {
        expect(home, home).toContain(theirs(w)[0]);
        for (const mark of others(w)) expect(home).not.toContain(mark);
        expect(home).toContain('Payment account');
      }
      const unfurls = slack.calls.slice(calls).filter((c) => c.method === 'chat.unfurl');
      for (const w of [one(), two()]) {
        const own = unfurls.filter((c) => c.token === w.token);
        expect(own).toHaveLength(1);
        expect(JSON.stringify(own[0]?.args)).toContain(theirs(w)[1]);
        for (const mark of others(w)) expect(JSON.stringify(own[0]?.args)).not.toContain(mark);
      }
      // Every Web API call was made with a token of the workspace it was about, and no other.
      const tokens = new Set(slack.calls.slice(calls).map((c) => c.token));
      expect([...tokens].sort()).toEqual([one().token, two().token].sort());
      // Every service call carried one of the two keys, and each invoice was asked with its own merchant's key
      // except when the other workspace asked for it (and was told it does not exist).
      const made = sandbox.requests.slice(asked);
      expect(new Set(made.map((q) => q.authorization))).toEqual(
        new Set([`Token ${ONE_KEY}`, `Token ${sandbox.apiKey}`]),
      );
      expect(slack.problems).toEqual([]);
    });

    it('runs each workspace’s payments feed in the same channel id, read with its key and posted with its token', async () => {
      const finance = 'G0FINANCE';
      slack.conversations.set(finance, { id: finance, is_private: true });
      const asked = sandbox.requests.length;
      const subscribe = (w: Workspace) =>
        askBot(bot, slack, (response_url) =>
          commandBody({
            command: '/balance',
            text: 'subscribe',
            response_url,
            team_id: w.team,
            user_id: w.installer,
            channel_id: finance,
          }),
        );
      const [a, b] = await Promise.all([subscribe(one()), subscribe(two())]);
      for (const r of [a, b])
        expect(JSON.stringify(r.reply)).toContain('the payments feed is on in this channel');
      const postsBy = (w: Workspace) =>
        slack.calls.filter(
          (c) => c.method === 'chat.postMessage' && c.args.channel === finance && c.token === w.token,
        );
      expect(postsBy(one())).toHaveLength(1);
      expect(postsBy(two())).toHaveLength(1);

      // Each merchant is paid: each workspace hears of its own payment only, exactly.
      sandbox.addMerchant(ONE_KEY, {
        balances: [{ id: 'XMR', title: 'Monero', balance: num('78.0001') }],
        invoices: [oneInvoice(sandbox.payUrl)],
      });
      sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('0.5') }]);
      await until(
        () => postsBy(one()).length === 2 && postsBy(two()).length === 2,
        'a feed post in each workspace',
        10_000,
      ).catch((e) => {
        console.log(
          bot.output
            .filter((l) => /feed|outbox|error|warn/i.test(l))
            .slice(-30)
            .join('\n'),
        );
        throw e;
      });
      const oneNews = JSON.stringify(postsBy(one())[1]?.args);
      const twoNews = JSON.stringify(postsBy(two())[1]?.args);
      expect(oneNews).toContain('received *+0.2224* XMR');
      expect(twoNews).toContain('balance 0.5 BTC');
      for (const mark of ['Bitcoin', 'BTC']) expect(oneNews).not.toContain(mark);
      for (const mark of ['Monero', 'XMR']) expect(twoNews).not.toContain(mark);
      const reads = sandbox.requests.slice(asked).filter((q) => q.path === '/api/v2/balance');
      expect(new Set(reads.map((q) => q.authorization))).toEqual(
        new Set([`Token ${ONE_KEY}`, `Token ${sandbox.apiKey}`]),
      );
      // Nothing more once nothing moves; each lists its own feed.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(postsBy(one())).toHaveLength(2);
      expect(postsBy(two())).toHaveLength(2);
      expect(slack.problems).toEqual([]);
    });

    it('watches the same invoice id in two workspaces as two watches, each checked with its key and told with its token', async () => {
      const shared = 'C0SHARED';
      // Workspace one's merchant happens to have an invoice of the same id as workspace two's.
      sandbox.addMerchant(ONE_KEY, {
        balances: [{ id: 'XMR', title: 'Monero', balance: num('77.7777') }],
        invoices: [oneInvoice(sandbox.payUrl), { ...oneInvoice(sandbox.payUrl), id: DEMO_INVOICE_IDS.open }],
      });
      const watch = (w: Workspace) =>
        askBot(bot, slack, (response_url) =>
          commandBody({
            command: '/invoice',
            text: `watch ${DEMO_INVOICE_IDS.open}`,
            response_url,
            team_id: w.team,
            user_id: w.installer,
            channel_id: shared,
          }),
        );
      const [one_, two_] = await Promise.all([watch(one()), watch(two())]);
      for (const r of [one_, two_]) expect(JSON.stringify(r.reply)).not.toContain('warning');
      const cards = slack.calls.filter((c) => c.method === 'chat.postMessage' && c.args.channel === shared);
      expect(cards.map((c) => c.token).sort()).toEqual([one().token, two().token].sort());
      const cardOf = (w: Workspace) => {
        const call = cards.find((c) => c.token === w.token);
        return slack.messages.find((m) => m.channel === shared && m.text === call?.args.text && !m.threadTs);
      };
      expect(JSON.stringify(cardOf(one())?.blocks)).toContain('One Coffee Roasters');
      expect(JSON.stringify(cardOf(two())?.blocks)).toContain('Acme Hardware Store');

      // Workspace two's merchant is paid; workspace one's invoice of the same id is not.
      sandbox.updateInvoice(DEMO_INVOICE_IDS.open, { payStatus: 'paid', status: 'paid' });
      const twoCard = cardOf(two());
      // Paid is final: workspace two's thread hears of it and, in the same reply, that its watch has ended.
      await until(
        () => slack.repliesIn(shared, twoCard?.ts ?? '').length >= 1,
        'the paid notice and the end in workspace two’s thread',
        20_000,
      );
      expect(slack.repliesIn(shared, twoCard?.ts ?? '').map((m) => visibleText(m))).toEqual([
        expect.stringMatching(/• \*Payment\*: Not paid → Paid\n[^\n]*no longer awaits payment/),
      ]);
      const told = slack.calls.filter(
        (c) => c.method === 'chat.postMessage' && c.args.thread_ts === twoCard?.ts,
      );
      expect(new Set(told.map((c) => c.token))).toEqual(new Set([two().token]));
      expect(slack.repliesIn(shared, cardOf(one())?.ts ?? '')).toEqual([]);
      const checks = sandbox.requests.filter((q) => q.path === `/api/v2/invoice/${DEMO_INVOICE_IDS.open}`);
      expect(new Set(checks.map((q) => q.authorization))).toEqual(
        new Set([`Token ${ONE_KEY}`, `Token ${sandbox.apiKey}`]),
      );
    });
    it('replaces a key: no instance reads with the old one after, and the feed tells no gap between accounts as money', async () => {
      const finance = 'G0FINANCE';
      const third = 'merchant-three-e2e-key-4e5f6a7b8c';
      sandbox.addMerchant(third, {
        balances: [{ id: 'ETH', title: 'Ethereum', balance: num('42') }],
        invoices: [],
      });
      // PostgreSQL: a second instance serves the same workspaces' background work meanwhile.
      const second = name === 'PostgreSQL' ? await startBot(manyEnv(database)) : undefined;
      try {
        await new Promise((resolve) => setTimeout(resolve, 2500));
        const posted = slack.calls.length;
        const replaced = await submitKey(two(), 'U0TWOBOSS', third);
        expect(replaced.status).toBe(200);
        const committed = Date.now();
        await until(
          () => sandbox.requests.some((q) => q.at > committed && q.authorization === `Token ${third}`),
          'a reading with the new key',
        );
        await new Promise((resolve) => setTimeout(resolve, 3000));
        const oldKeyAfter = sandbox.requests.filter(
          (q) => q.at > committed && q.authorization === `Token ${sandbox.apiKey}`,
        );
        expect(oldKeyAfter).toEqual([]);
        const feedPosts = slack.calls
          .slice(posted)
          .filter((c) => c.args.channel === finance && c.token === two().token)
          .map((c) => JSON.stringify(c.args));
        expect(feedPosts.join('\n')).not.toMatch(/withdrawn|received|Bitcoin|Ethereum/);
      } finally {
        await second?.stop();
        expect((await submitKey(two(), 'U0TWOBOSS', sandbox.apiKey)).status).toBe(200);
      }
    });
    it('ends a workspace’s watches when its payment account is disconnected, each thread told why', async () => {
      const shared = 'C0SHARED';
      const card = slack.messages.find(
        (m) =>
          m.channel === shared && !m.threadTs && JSON.stringify(m.blocks).includes('One Coffee Roasters'),
      );
      if (!card) throw new Error('workspace one’s live card');
      const before = slack.repliesIn(shared, card.ts).length;
      const response = await postToBot(
        `${bot.url}/slack/events`,
        homeClickBody(one(), one().installer, 'disconnect_payment_account'),
        SECRETS.signingSecret,
      );
      expect(response.status).toBe(200);
      await until(
        () => slack.repliesIn(shared, card.ts).length > before,
        'the end in workspace one’s thread',
      );
      expect(visibleText(slack.repliesIn(shared, card.ts).at(-1))).toContain(
        'the workspace’s payment account was disconnected, so the bot can no longer read the invoice',
      );
      const shown = card.edits.at(-1);
      expect(JSON.stringify(shown?.blocks)).toContain('payment account was disconnected');
      expect(JSON.stringify(shown?.blocks)).not.toContain('stop_watch');
      expect(JSON.stringify((await balanceFrom(one())).reply)).toContain('not connected');
      // Connected again and watching again, for what follows.
      expect((await submitKey(one(), one().installer, ONE_KEY)).status).toBe(200);
      const again = await askBot(bot, slack, (response_url) =>
        commandBody({
          command: '/invoice',
          text: `watch ${DEMO_INVOICE_IDS.open}`,
          response_url,
          team_id: one().team,
          user_id: one().installer,
          channel_id: shared,
        }),
      );
      expect(JSON.stringify(again.reply)).not.toContain('warning');
    });
  });

  describe('many workspaces: uninstalling', () => {
    it('tokens_revoked and app_uninstalled, in either order and twice, end one workspace and leave the other', async () => {
      // Workspace one's watch is being checked, with its key, until it goes.
      const mark = sandbox.requests.length;
      await until(
        () => sandbox.requests.slice(mark).some((q) => q.authorization === `Token ${ONE_KEY}`),
        'a check of workspace one’s watch',
      );
      const revoked = { type: 'tokens_revoked', tokens: { bot: ['U0BOTONE'] } };
      expect((await event(WORKSPACES.one, revoked)).status).toBe(200);
      expect((await event(WORKSPACES.one, revoked)).status).toBe(200);
      expect((await event(WORKSPACES.one, { type: 'app_uninstalled' })).status).toBe(200);
      expect((await event(WORKSPACES.one, { type: 'app_uninstalled' })).status).toBe(200);
      await until(() => bot.output.some((l) => l.includes('uninstalled')), 'the uninstall');

      const before = slack.calls.length;
      await refusedBalance(WORKSPACES.one);
      await until(() => bot.output.some((l) => l.includes('no installation for T0ONE')), 'the refusal');
      // Its watch is gone with it: no more checks with its key, no post with its token.
      const asked = sandbox.requests.length;
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(sandbox.requests.slice(asked).filter((q) => q.authorization === `Token ${ONE_KEY}`)).toEqual([]);
      expect(slack.calls.slice(before).some((c) => c.token === WORKSPACES.one.token)).toBe(false);
      expect(JSON.stringify((await balanceFrom(WORKSPACES.two)).reply)).toContain('Bitcoin');
    });

    it('never wrote a token, a payment key, the client secret or the encryption key to its output', () => {
      const output = bot.output.join('\n');
      for (const secret of [
        CLIENT.secret,
        CLIENT.state,
        KEY,
        SECRETS.signingSecret,
        sandbox.apiKey,
        ONE_KEY,
        ...Object.values(WORKSPACES).map((w) => w.token),
      ])
        expect(output).not.toContain(secret);
      expect(slack.problems).toEqual([]);
    });
  });

  describe('many workspaces: ENCRYPTION_KEY', () => {
    it('refuses to start with another key, by name, changing nothing; the right key starts again', async () => {
      await bot.stop();
      const wrong = await startBot(
        manyEnv(database, { ENCRYPTION_KEY: randomBytes(32).toString('base64') }),
        {
          expectExit: true,
        },
      );
      expect(await wrong.exited).toBe(1);
      expect(wrong.output.join('\n')).toMatch(
        /ENCRYPTION_KEY \(key [0-9a-f]{8}\) does not open the secrets in the store/,
      );

      const rotated = randomBytes(32).toString('base64');
      bot = await startBot(manyEnv(database, { ENCRYPTION_KEY: rotated, ENCRYPTION_KEY_PREVIOUS: KEY }));
      await bot.stop();
      // Every secret was sealed again: the new key alone opens them.
      bot = await startBot(manyEnv(database, { ENCRYPTION_KEY: rotated }));
      expect(JSON.stringify((await balanceFrom(WORKSPACES.two)).reply)).toContain('Bitcoin');
    });
  });
});
