import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { demoInvoices, num, type WireInvoice } from '../../src/sandbox/data.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { freshDatabase } from '../support/postgres-server.js';
import { commandBody, postToBot } from '../support/slack-requests.js';
import { type SlackStandIn, startSlackStandIn } from '../support/slack-stand-in.js';
import { addToSlackLink, keySubmissionBody, workspaceEventBody } from '../support/workspace-requests.js';
import { askBot, type BotProcess, SECRETS, startBot, until } from './harness.js';

/**
 * The stack of the many-workspaces scenario (workspaces.test.ts): the real bot (`node dist/main.js`)
 * with an OAuth client and no bot token, the Slack stand-in, the sandbox, and the store, SQLite or
 * PostgreSQL; the workspaces, and the requests the scenario's modules (workspaces-*.ts) send.
 * `sandbox`, `slack`, `bot` and `database` are live bindings, set by `useWorkspacesStack`.
 */

/** Workspace one's merchant: its own key, balance and invoice, which workspace two never sees. */
export const ONE_KEY = 'merchant-one-e2e-key-6d5c4b3a2910';
export const ONE_INVOICE = 'a1a1a1a1-1111-4aaa-8bbb-0123456789ab';
export const oneInvoice = (payUrl: string): WireInvoice => ({
  ...(demoInvoices(payUrl)[0] as WireInvoice),
  id: ONE_INVOICE,
  amount: num('31.415'),
  title: 'Espresso machine service',
  link: `${payUrl}/pay/${ONE_INVOICE}`,
  shop: { title: 'One Coffee Roasters', successUrl: null, failUrl: null },
});
/** What only each merchant's answers contain: its balance's currency, then its invoice's shop. */
export const ONE_MONEY = ['Monero', 'One Coffee Roasters'] as const;
export const TWO_MONEY = ['Bitcoin', 'Acme Hardware Store'] as const;

export const CLIENT = {
  id: '1111.2222',
  secret: 'e2e-client-secret-8d7c6b',
  state: 'e2e-state-secret-5a4b3c',
};
export const KEY = randomBytes(32).toString('base64');
export interface Workspace {
  team: string;
  installer: string;
  token: string;
  code: string;
}
export const WORKSPACES: Record<'one' | 'two', Workspace> = {
  one: { team: 'T0ONE', installer: 'U0ONEADMIN', token: 'xoxb-one-e2e-secret-token-1a2b', code: 'code-one' },
  two: { team: 'T0TWO', installer: 'U0TWOADMIN', token: 'xoxb-two-e2e-secret-token-3c4d', code: 'code-two' },
};

export let sandbox: Sandbox;
export let slack: SlackStandIn;
export let bot: BotProcess;
export let database: string;

export const stores = {
  SQLite: async () => `file:${join(mkdtempSync(join(tmpdir(), 'bot-workspaces-')), 'bot.sqlite')}`,
  PostgreSQL: async () => freshDatabase(inject('postgresUrl')),
};

/**
 * Everything the store holds of the installations, as it lies there: the SQLite file's bytes
 * and its write-ahead log's, or PostgreSQL's rows as text.
 */
export async function stored(): Promise<string> {
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

export const manyEnv = (databaseUrl: string, extra: Record<string, string> = {}) => ({
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
export function offerCode(w: Workspace, extra: Record<string, unknown> = {}): void {
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
export async function startInstall(): Promise<{ state: string; cookie: string }> {
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

export const redirect = (query: Record<string, string>, cookie?: string) =>
  fetch(`${bot.url}/slack/oauth_redirect?${new URLSearchParams(query)}`, {
    headers: cookie ? { cookie } : {},
  });

/** Installs `w` through /slack/install and /slack/oauth_redirect; `extra` goes into its oauth.v2.access answer. */
export async function install(w: Workspace, extra: Record<string, unknown> = {}): Promise<void> {
  offerCode(w, extra);
  const { state, cookie } = await startInstall();
  const done = await redirect({ code: w.code, state }, cookie);
  expect(done.status).toBe(200);
  expect(await done.text()).toContain('Crypto Payments is installed');
}

export const balanceFrom = (w: Workspace, user: string = w.installer, at: BotProcess = bot) =>
  askBot(at, slack, (response_url) =>
    commandBody({ command: '/balance', text: '', response_url, team_id: w.team, user_id: user }),
  );

/** A request Bolt refuses at authorization is acked empty, and nothing follows. */
export const refusedBalance = async (w: Workspace) => {
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

export const event = (w: Workspace, payload: Record<string, unknown>) =>
  postToBot(`${bot.url}/slack/events`, workspaceEventBody(w, payload), SECRETS.signingSecret, {
    contentType: 'application/json',
  });

/** A modal's submission, form-encoded as Slack sends it. */
export const submitKey = (w: Workspace, user: string, apiKey: string) =>
  postToBot(`${bot.url}/slack/events`, keySubmissionBody(w, user, apiKey), SECRETS.signingSecret);

export const homeFor = async (w: Workspace, user: string) => {
  const before = slack.homeViews.length;
  await event(w, { type: 'app_home_opened', user, channel: 'D0', tab: 'home' });
  await until(() => slack.homeViews.slice(before).some((h) => h.userId === user), `the Home tab of ${user}`);
  return JSON.stringify(slack.homeViews.slice(before).find((h) => h.userId === user)?.view);
};

/** Starts the stack before the scenario, on the store `open` makes, and stops it after. */
export function useWorkspacesStack(open: () => Promise<string>): void {
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
}

/** The scenario's last part: the bot restarted with a wrong, then a rotated ENCRYPTION_KEY. */
export function restartingWithKeys(): void {
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
}
