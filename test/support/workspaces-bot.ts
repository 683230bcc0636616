import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { createBot } from '../../src/app.js';
import { loadSetup, type ManyWorkspacesConfig } from '../../src/config.js';
import type { PaymentsFor } from '../../src/installations/tenants.js';
import type { Bot } from '../../src/lifecycle.js';
import { createMetrics } from '../../src/metrics.js';
import { CircuitBreaker, createPaymentsClient, openConnections } from '../../src/payments/index.js';
import { Pacer } from '../../src/payments/pacer.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { openStore, type Store } from '../../src/store/database.js';
import { createInstallations, type Installations } from '../../src/store/installations.js';
import { type InstallationId, installationId } from '../../src/store/keys.js';
import { sharedPaces } from '../../src/store/pace.js';
import { prepareSealing } from '../../src/store/rotation.js';
import { createSealer } from '../../src/store/sealing.js';
import { WATCH_CHECKS_AT_ONCE } from '../../src/watches/service.js';
import { captureLogs } from './bolt.js';
import { commandBody, postToBot, type SlackPostResult } from './slack-requests.js';
import { type SlackStandIn, startSlackStandIn } from './slack-stand-in.js';
import {
  addToSlackLink,
  homeClickBody,
  keySubmissionBody,
  type TeamOf,
  workspaceEventBody,
} from './workspace-requests.js';

/**
 * The many-workspaces bot in the test's own process, assembled exactly as src/main.ts does when
 * SLACK_CLIENT_ID is set (`loadSetup`, the sealer checked against the store, one breaker, the
 * connection pools, a payments client per key with its shared pace), on a SQLite file of its
 * own, started on port 0, talking to the Slack stand-in and the sandbox payment service. The
 * end-to-end suite runs the built bot in a child process (test/e2e/workspaces.test.ts); this is
 * the same bot, quick enough for every unit run and every mutant.
 */

export const OAUTH = {
  clientId: '1111.2222',
  clientSecret: 'unit-client-secret-8d7c6b',
  stateSecret: 'unit-state-secret-5a4b3c',
};
const SIGNING_SECRET = 'unit-signing-secret-0f9e8d7c';

/** A workspace that installs the app: its team, who installs it, the token Slack gives it, its OAuth code. */
export interface Workspace extends TeamOf {
  /** Its installation's id too. */
  team: InstallationId;
  installer: string;
  token: string;
  code: string;
}

/** Workspace `name` (letters only): `T0<NAME>`, installed by `U0<NAME>ADMIN` with its own token. */
export function workspace(name: string): Workspace {
  const up = name.toUpperCase();
  return {
    team: installationId(`T0${up}`),
    installer: `U0${up}ADMIN`,
    token: `xoxb-${name}-unit-secret-token-${randomBytes(4).toString('hex')}`,
    code: `code-${name}`,
  };
}

export interface WorkspacesBot {
  readonly url: string;
  readonly bot: Bot;
  readonly slack: SlackStandIn;
  readonly sandbox: Sandbox;
  readonly store: Store;
  readonly config: ManyWorkspacesConfig;
  /** The store's installations, opened with the bot's key. */
  readonly installations: Installations;
  /** Every log line, parsed. */
  readonly logs: Record<string, unknown>[];
  /** The log as written, for leak checks. */
  readonly rawLogs: string;
  /** The SQLite file's bytes and its write-ahead log's, as text: what lies on disk. */
  stored(): string;
  /** What oauth.v2.access answers for `w`'s code; `extra` changes it (another installer, an organisation). */
  offerCode(w: Workspace, extra?: Record<string, unknown>): void;
  /** Opens the install page as a browser does: its HTML, its Add to Slack link's state and the cookie set with it. */
  startInstall(): Promise<{ html: string; link: URL; state: string; cookie: string; status: number }>;
  /** Slack's redirect back to the bot, with `query`, from a browser holding `cookie`. */
  redirect(query: Record<string, string>, cookie?: string): Promise<Response>;
  /** Installs `w` through the install page and the redirect; resolves with the page the browser shows. */
  install(w: Workspace, extra?: Record<string, unknown>): Promise<Response>;
  /** A signed request; resolves with the ack and what the person ends up seeing (in the ack, or at the response_url). */
  ask(
    body: (responseUrl: string) => string,
  ): Promise<{ ack: SlackPostResult; reply: Record<string, unknown> }>;
  /** A slash command of `user` in workspace `w`. */
  command(
    w: TeamOf,
    user: string,
    text: string,
    opts?: { command?: '/balance' | '/invoice'; channel?: string },
  ): Promise<{ ack: SlackPostResult; reply: Record<string, unknown> }>;
  /** Any signed request, as Slack sends it; nothing waited for after the ack. */
  post(body: string, contentType?: string): Promise<SlackPostResult>;
  /** An Events API callback of workspace `w`. */
  event(w: TeamOf, event: Record<string, unknown>, opts?: { eventTime?: number }): Promise<SlackPostResult>;
  /** A Home tab button clicked by `user`. */
  click(w: TeamOf, user: string, actionId: string, opts?: { responseUrl?: string }): Promise<SlackPostResult>;
  /** The payment account modal submitted by `user` with `apiKey`. */
  submitKey(w: TeamOf, user: string, apiKey: string | null): Promise<SlackPostResult>;
  /** Opens `user`'s Home tab; resolves with the view published for them, as text. */
  homeFor(w: TeamOf, user: string): Promise<string>;
  /** Resolves once a log line with this message was written (after `from` lines); with that line. */
  logged(msg: string, from?: number): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Waits for `check` to find something, looking every 5 ms, up to `ms`. */
async function until<T>(check: () => T | undefined, what: string, ms = 5000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const found = check();
    if (found !== undefined) return found;
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The environment of a many-workspaces deployment, as README → Offer it to many workspaces lists it. */
function manyWorkspacesEnv(opts: {
  slackApiUrl: string;
  paymentApiUrl: string;
  payUrl: string;
  database: string;
  encryptionKey: string;
}): Record<string, string> {
  return {
    SLACK_CLIENT_ID: OAUTH.clientId,
    SLACK_CLIENT_SECRET: OAUTH.clientSecret,
    SLACK_STATE_SECRET: OAUTH.stateSecret,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    ENCRYPTION_KEY: opts.encryptionKey,
    SLACK_API_URL: opts.slackApiUrl,
    PAYMENT_API_URL: opts.paymentApiUrl,
    PAYMENT_PAY_URL: opts.payUrl,
    PAYMENT_API_TIMEOUT_MS: '2000',
    DATABASE_URL: opts.database,
    PORT: '0',
    HOST: '127.0.0.1',
    WATCH_POLL_SECONDS: '1',
    BALANCE_POLL_SECONDS: '60',
    LOG_LEVEL: 'debug',
  };
}

/** Starts the many-workspaces bot with its own sandbox, Slack stand-in and SQLite file; `env` adds to its environment. */
async function startWorkspacesBot(opts: { env?: Record<string, string> } = {}): Promise<WorkspacesBot> {
  const sandbox = await startSandbox();
  const slack = await startSlackStandIn({
    teamId: 'T0NOBODY',
    botToken: 'xoxb-no-workspace-token',
    clientId: OAUTH.clientId,
    clientSecret: OAUTH.clientSecret,
  });
  const dir = mkdtempSync(join(tmpdir(), 'bot-workspaces-unit-'));
  const path = join(dir, 'bot.sqlite');
  const env = {
    ...manyWorkspacesEnv({
      slackApiUrl: slack.apiUrl,
      paymentApiUrl: sandbox.url,
      payUrl: sandbox.payUrl,
      database: `file:${path}`,
      encryptionKey: randomBytes(32).toString('base64'),
    }),
    ...opts.env,
  };
  const setup = loadSetup(env);
  if (setup.tenancy !== 'many') throw new Error('SLACK_CLIENT_ID set, yet not many workspaces');
  const { config } = setup;

  // As src/main.ts, from here on.
  const capture = captureLogs([...setup.secrets]);
  const logger = capture.logger;
  const pools = openConnections({
    apiUrl: config.payments.apiUrl,
    timeoutMs: config.payments.timeoutMs,
    concurrency: config.payments.concurrency,
    background: { connections: WATCH_CHECKS_AT_ONCE, perKey: 4 },
    manyKeys: true,
  });
  const store = await openStore(config.database);
  const sealer = createSealer(config.encryption);
  await prepareSealing(store, sealer, Date.now());
  const metrics = createMetrics();
  const breaker = new CircuitBreaker();
  const paces = sharedPaces(store, config.backgroundRps);
  const paymentsFor: PaymentsFor = (apiKey, options) =>
    createPaymentsClient({
      baseUrl: config.payments.apiUrl,
      apiKey,
      ...pools.interactive,
      timeoutMs: Math.min(options.timeoutMs, config.payments.timeoutMs),
      background: {
        ...pools.background,
        pace:
          options.installation === undefined
            ? new Pacer(config.backgroundRps).take
            : paces(options.installation),
      },
      breaker: options.checking ? new CircuitBreaker() : breaker,
      userAgent: 'payments-slack-bot/unit',
      logger,
      onCall: (report) => {
        options.onCall?.(report);
        metrics.paymentCall(report, options.installation);
      },
    });
  const bot = createBot({ ...setup, sealer, paymentsFor }, { logger, store, metrics, breaker });
  const { port } = await bot.start();
  const url = `http://127.0.0.1:${port}`;
  const installations = createInstallations(store, sealer, Date.now);

  const post = (body: string, contentType?: string) =>
    postToBot(`${url}/slack/events`, body, SIGNING_SECRET, contentType ? { contentType } : {});
  const ask: WorkspacesBot['ask'] = async (body) => {
    const responseUrl = slack.responseUrl();
    const ack = await post(body(responseUrl));
    const reply = ack.body ? ack.json() : (await slack.waitForPost(responseUrl, 5000)).body;
    return { ack, reply };
  };
  const redirect = (query: Record<string, string>, cookie?: string) =>
    fetch(`${url}/slack/oauth_redirect?${new URLSearchParams(query)}`, {
      headers: cookie ? { cookie } : {},
    });
  const offerCode = (w: Workspace, extra: Record<string, unknown> = {}) => {
    slack.oauthCodes.set(w.code, {
      access_token: w.token,
      scope: 'commands,chat:write,users:read',
      bot_user_id: `U0BOT${w.team.slice(2)}`,
      team: { id: w.team, name: w.team },
      enterprise: null,
      is_enterprise_install: false,
      authed_user: { id: w.installer },
      ...extra,
    });
  };
  const startInstall = async () => {
    const page = await fetch(`${url}/slack/install`);
    const html = await page.text();
    const link = addToSlackLink(html);
    if (!link) throw new Error(`no Add to Slack link in the install page:\n${html}`);
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    return { html, link, state: link.searchParams.get('state') ?? '', cookie, status: page.status };
  };

  return {
    url,
    bot,
    slack,
    sandbox,
    store,
    config,
    installations,
    get logs() {
      return capture.lines;
    },
    get rawLogs() {
      return capture.raw.join('');
    },
    stored: () =>
      [path, `${path}-wal`]
        .filter(existsSync)
        .map((f) => readFileSync(f).toString('latin1'))
        .join(''),
    offerCode,
    startInstall,
    redirect,
    async install(w, extra = {}) {
      offerCode(w, extra);
      const { state, cookie } = await startInstall();
      return redirect({ code: w.code, state }, cookie);
    },
    ask,
    command: (w, user, text, { command = '/balance', channel } = {}) =>
      ask((response_url) =>
        commandBody({
          command,
          text,
          response_url,
          team_id: w.team,
          user_id: user,
          ...(channel ? { channel_id: channel } : {}),
        }),
      ),
    post,
    event: (w, event, eventOpts = {}) => post(workspaceEventBody(w, event, eventOpts), 'application/json'),
    click: (w, user, actionId, clickOpts = {}) => post(homeClickBody(w, user, actionId, clickOpts)),
    submitKey: (w, user, apiKey) => post(keySubmissionBody(w, user, apiKey)),
    async homeFor(w, user) {
      const before = slack.homeViews.length;
      const ack = await post(
        workspaceEventBody(w, { type: 'app_home_opened', user, channel: 'D0', tab: 'home' }),
        'application/json',
      );
      if (ack.status !== 200) throw new Error(`app_home_opened answered ${ack.status}`);
      const home = await until(
        () => slack.homeViews.slice(before).find((h) => h.userId === user),
        `the Home tab of ${user}`,
      );
      return JSON.stringify(home.view);
    },
    logged: (msg, from = 0) =>
      until(() => capture.lines.slice(from).find((l) => l.msg === msg), `the log line “${msg}”`),
    async close() {
      await bot.stop(1000);
      await pools.close();
      await store.close();
      await Promise.all([slack.close(), sandbox.close()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One many-workspaces bot per test file (started before its tests, stopped after them), whose
 * Slack stand-in must have seen nothing outside Block Kit's limits by the end.
 */
export function useWorkspacesBot(): { readonly bot: WorkspacesBot } {
  let started: WorkspacesBot | undefined;
  beforeAll(async () => {
    started = await startWorkspacesBot();
  });
  afterAll(async () => {
    if (!started) return;
    const problems = [...started.slack.problems];
    await started.close();
    expect(problems).toEqual([]);
  });
  return {
    get bot() {
      if (!started) throw new Error('the bot has not started');
      return started;
    },
  };
}
