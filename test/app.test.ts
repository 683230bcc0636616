import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../src/config.js';
import { fetchIdentity } from '../src/installations/one.js';
import { DEMO_INVOICE_IDS } from '../src/sandbox/data.js';
import { serviceState } from '../src/service-state.js';
import { ONE_WORKSPACE } from '../src/store/keys.js';
import { assembledBot, useAssembledWorld } from './support/assembled-bot.js';
import { visibleText } from './support/block-kit.js';
import { captureLogs } from './support/bolt.js';
import {
  blockActionsBody,
  commandBody,
  eventBody,
  functionExecutedBody,
  linkSharedBody,
  messageActionBody,
  postToBot,
} from './support/slack-requests.js';
import { startSlackStandIn } from './support/slack-stand-in.js';

/**
 * The bot as main.ts puts it together, in this process: its HTTP server on port 0, the sandbox
 * service and the Slack stand-in on loopback. The end-to-end suite drives the built bot as a
 * child process; this checks the wiring itself, quickly.
 */
const BOT_TOKEN = 'xoxb-app-test-token';
const APP_TOKEN = 'xapp-app-test-token';
const SECRET = 'app-test-signing-secret';

describe('the assembled bot', () => {
  const world = useAssembledWorld({ botToken: BOT_TOKEN, appToken: APP_TOKEN });

  const configFor = (env: Record<string, string> = {}) =>
    loadConfig({
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: world.slack.apiUrl,
      PAYMENT_API_URL: world.sandbox.url,
      PAYMENT_API_KEY: world.sandbox.apiKey,
      PORT: '0',
      HOST: '127.0.0.1',
      WATCH_POLL_SECONDS: '1',
      ...env,
    });

  /** The bot as main.ts assembles it, not started yet; on the shared world.store unless given its own. */
  async function assembled(env: Record<string, string> = {}, own = world.store) {
    const config = configFor(env);
    const logs = captureLogs([BOT_TOKEN, APP_TOKEN, SECRET, world.sandbox.apiKey]);
    const bot = await assembledBot({ config, store: own, logger: logs.logger, dispatcher: world.pool });
    return { bot, logs };
  }

  async function started(env: Record<string, string> = {}, own = world.store) {
    const { bot, logs } = await assembled(env, own);
    world.bots.push(bot);
    const { port } = await bot.start();
    return { bot, base: `http://127.0.0.1:${port}`, logs };
  }

  /** `/invoice watch` of the open demo invoice in `channel`, signed as Slack sends it. */
  const watchOpenInvoice = (base: string, channel: string) =>
    postToBot(
      `${base}/slack/events`,
      commandBody({
        command: '/invoice',
        text: `watch ${DEMO_INVOICE_IDS.open}`,
        response_url: world.slack.responseUrl(),
        channel_id: channel,
      }),
      SECRET,
    );

  const ownStore = world.ownStore;

  it('learns its workspace and ids from auth.test', async () => {
    const config = configFor();
    expect(await fetchIdentity(config, captureLogs().logger)).toEqual({
      teamId: 'T0HOME',
      enterpriseId: undefined,
      enterpriseInstall: false,
      botUserId: 'U0BOT',
      botId: 'B0BOT',
    });
  });

  it('serves /healthz and /metrics once started, and says so in the log', async () => {
    const { base, logs } = await started();
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get('content-type')).toBe('application/json');
    expect(await health.json()).toEqual({ ok: true });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^slackbot_inflight 0$/m);
    expect(metrics).toMatch(/^slackbot_watches_active \d+$/m);
    expect(metrics).toMatch(/^slackbot_watch_checks_overdue \d+$/m);
    expect(logs.lines.find((l) => l.msg === 'bot started')).toMatchObject({ mode: 'http', team: 'T0HOME' });
  });

  it('answers a signed slash command in HTTP mode within the ack, and counts it', async () => {
    const { base } = await started();
    const answer = await postToBot(
      `${base}/slack/events`,
      commandBody({
        command: '/invoice',
        text: DEMO_INVOICE_IDS.paid,
        response_url: world.slack.responseUrl(),
      }),
      SECRET,
    );
    expect(answer.status).toBe(200);
    expect(answer.json()).toMatchObject({ response_type: 'in_channel' });
    expect(answer.body).toContain(DEMO_INVOICE_IDS.paid);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/slackbot_requests_total\{[^}]*name="\/invoice"[^}]*\} 1/);
    expect(metrics).toMatch(/slackbot_payment_calls_total\{[^}]*\} 1/);
  });

  it('posts as the bot through the Web API, counting the call: a watched invoice gets its card', async () => {
    const { base } = await started({ INVOICE_REPLY: 'ephemeral' });
    const channel = 'C0APPWATCH';
    world.slack.conversations.set(channel, { id: channel });
    const answer = await watchOpenInvoice(base, channel);
    expect(answer.status).toBe(200);
    await expect.poll(() => world.slack.repliesIn(channel).length, { timeout: 5000 }).toBe(1);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/slackbot_slack_calls_total\{method="chat.postMessage",result="ok"\} 1/);
    expect(metrics).toMatch(/^slackbot_watches_active 1$/m);
    expect(metrics).toMatch(/^slackbot_watch_checks_overdue 0$/m); // the next check is a second away

    // The scheduler checks the watch, and the outbox says what changed in the card's thread.
    // Part of it paid: a change that leaves the watch going (a paid invoice would end it, with a second note).
    world.sandbox.updateInvoice(DEMO_INVOICE_IDS.open, { payStatus: 'partially_paid' });
    const card = world.slack.repliesIn(channel)[0];
    await expect.poll(() => world.slack.repliesIn(channel, card?.ts).length, { timeout: 8000 }).toBe(1);
    const after = await (await fetch(`${base}/metrics`)).text();
    const lag = /^slackbot_scheduler_lag_seconds_count\{job="watch_poll"\} (\d+)$/m.exec(after);
    expect(Number(lag?.[1])).toBeGreaterThan(0);
    const lagSum = /^slackbot_scheduler_lag_seconds_sum\{job="watch_poll"\} (\S+)$/m.exec(after);
    expect(Number(lagSum?.[1])).toBeLessThan(60); // seconds, not milliseconds
  });

  it('routes each kind of request Slack sends to its handler', async () => {
    const { base, logs } = await started({ BALANCE_ALLOWED_USERS: 'U0FINANCE' });
    const send = (body: string, contentType?: string) =>
      postToBot(`${base}/slack/events`, body, SECRET, contentType ? { contentType } : {});
    const link = `${world.sandbox.payUrl}/pay/${DEMO_INVOICE_IDS.open}`;
    const calls = (method: string) => world.slack.calls.filter((c) => c.method === method).length;
    const before = {
      unfurl: calls('chat.unfurl'),
      post: calls('chat.postMessage'),
      done: calls('functions.completeSuccess'),
    };

    // A numbered Refresh button (the second card of a message) replaces its card.
    const refreshed = world.slack.responseUrl();
    await send(
      blockActionsBody({
        actionId: 'refresh_invoice:1',
        value: DEMO_INVOICE_IDS.paid,
        responseUrl: refreshed,
      }),
    );
    expect((await world.slack.waitForPost(refreshed)).body).toMatchObject({ replace_original: true });

    const checked = world.slack.responseUrl();
    await send(
      messageActionBody({
        callbackId: 'check_payment',
        responseUrl: checked,
        message: { ts: '1.000001', text: link },
      }),
    );
    expect(visibleText((await world.slack.waitForPost(checked)).body)).toContain('Order #1042');

    await send(
      blockActionsBody({
        actionId: 'share_invoice:0',
        value: `${DEMO_INVOICE_IDS.open} 1.000001`,
        responseUrl: world.slack.responseUrl(),
      }),
    );
    await send(linkSharedBody([link]), 'application/json');
    await send(
      eventBody({
        type: 'app_home_opened',
        user: 'U0FINANCE',
        channel: 'D0HOME',
        tab: 'home',
        event_ts: '1.2',
      }),
      'application/json',
    );
    await send(
      functionExecutedBody('get_invoice', { invoice: DEMO_INVOICE_IDS.open }, 'Fx0APP'),
      'application/json',
    );
    await expect.poll(() => calls('chat.postMessage') - before.post).toBe(1);
    await expect.poll(() => calls('chat.unfurl') - before.unfurl).toBe(1);
    await expect
      .poll(() => world.slack.homeViews.filter((v) => v.userId === 'U0FINANCE').length)
      .toBeGreaterThan(0);
    await expect.poll(() => calls('functions.completeSuccess') - before.done).toBe(1);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    for (const method of ['chat.unfurl', 'views.publish', 'functions.completeSuccess'])
      expect(metrics).toContain(`slackbot_slack_calls_total{method="${method}",result="ok"} 1`);
    for (const kind of ['action', 'shortcut', 'event', 'function'])
      expect(metrics).toMatch(new RegExp(`slackbot_requests_total\\{kind="${kind}",`));
    // Durations are in seconds: every request here took well under one.
    for (const [, sum] of metrics.matchAll(/^slackbot_request_duration_seconds_sum\{[^}]*\} (\S+)$/gm))
      expect(Number(sum)).toBeLessThan(5);
    expect(logs.lines.find((l) => l.msg === 'shortcut check_payment')).toMatchObject({
      user: 'U0AGENT',
      team: 'T0HOME',
      channel: 'C0SUPPORT',
    });
    expect(logs.lines.find((l) => l.msg === 'function get_invoice')).toMatchObject({ team: 'T0HOME' });
  });

  it('refuses unsigned requests', async () => {
    const { base } = await started();
    const body = commandBody({ command: '/balance', text: '', response_url: world.slack.responseUrl() });
    const answer = await postToBot(`${base}/slack/events`, body, 'not-the-signing-secret');
    expect(answer.status).toBe(401);
  });

  it('connects over Socket Mode with the app-level token and has no Slack endpoint of its own', async () => {
    const { base, logs } = await started({ SLACK_APP_TOKEN: APP_TOKEN });
    await world.slack.socket.connected();
    expect(logs.lines.find((l) => l.msg === 'bot started')).toMatchObject({ mode: 'socket' });
    expect((await fetch(`${base}/slack/events`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('stops cleanly: no more requests taken, nothing left in flight', async () => {
    const { bot, base } = await started();
    world.bots.splice(world.bots.indexOf(bot), 1);
    expect(await bot.stop(1000)).toEqual({ drained: true });
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });

  it('undoes a start that a stop interrupts', async () => {
    const { bot } = await assembled();
    const starting = bot.start();
    expect(await bot.stop(1000)).toEqual({ drained: true });
    const { port } = await starting;
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  describe('says what to fix when Slack turns it away at start', () => {
    it('a bot token Slack rejects, keeping Slack’s error as the cause', async () => {
      const config = configFor({ SLACK_BOT_TOKEN: 'xoxb-revoked-token' });
      const error = await fetchIdentity(config, captureLogs().logger).catch((e: unknown) => e);
      expect((error as Error).message).toBe(
        'Slack rejected SLACK_BOT_TOKEN (invalid_auth); copy the Bot User OAuth Token again',
      );
      expect((error as Error).cause).toMatchObject({ data: { error: 'invalid_auth' } });
    });

    it.each([
      { team_id: 'T0HOME', user_id: 'U0BOT' },
      { team_id: 'T0HOME', bot_id: 'B0BOT' },
      { user_id: 'U0BOT', bot_id: 'B0BOT' },
    ])('an auth.test answer without one of the ids it needs (%o)', async (ids) => {
      world.slack.answerNext('auth.test', { ok: true, ...ids });
      await expect(fetchIdentity(configFor(), captureLogs().logger)).rejects.toThrow(
        'auth.test did not say which workspace and bot the token belongs to',
      );
    });

    it('a Slack it cannot reach', async () => {
      const gone = await startSlackStandIn({ teamId: 'T0HOME', botToken: BOT_TOKEN });
      await gone.close();
      const config = configFor({ SLACK_API_URL: gone.apiUrl });
      await expect(fetchIdentity(config, captureLogs().logger)).rejects.toThrow(
        new RegExp(`^could not reach Slack at ${gone.apiUrl} \\(.+\\); check the network or SLACK_API_URL$`),
      );
    });
  });

  it('stops a bot that never started', async () => {
    const { bot } = await assembled();
    expect(await bot.stop(100)).toEqual({ drained: true });
  });

  it('counts the work in flight, and the reply it then posts to the response_url', async () => {
    const { base } = await started({}, await ownStore());
    const scrape = async () => (await fetch(`${base}/metrics`)).text();
    world.sandbox.setLatency(1700); // past the 1.5 s fast path
    onTestFinished(() => world.sandbox.setLatency(0));
    const responseUrl = world.slack.responseUrl();
    const answer = await postToBot(
      `${base}/slack/events`,
      commandBody({ command: '/invoice', text: DEMO_INVOICE_IDS.paid, response_url: responseUrl }),
      SECRET,
    );
    expect(answer.status).toBe(200); // acked empty at the fast-path deadline; the reply follows
    expect(await scrape()).toMatch(/^slackbot_inflight 1$/m);
    await world.slack.waitForPost(responseUrl, 5000);
    await expect.poll(scrape).toMatch(/^slackbot_slack_calls_total\{method="response_url",result="ok"\} 1$/m);
    expect(await scrape()).toMatch(/^slackbot_inflight 0$/m);
  });

  it('posts without the SDK’s own retries: after a 429 or a 5xx the person hears at once to try again', async () => {
    const { base, logs } = await started({ INVOICE_REPLY: 'ephemeral' }, await ownStore());
    const channel = 'C0APPRETRY';
    world.slack.conversations.set(channel, { id: channel });
    const open = world.sandbox.invoices.find((i) => i.id === DEMO_INVOICE_IDS.open);
    if (open) world.sandbox.updateInvoice(open.id, open); // as it was before an earlier test paid it
    const watch = async () => (await watchOpenInvoice(base, channel)).json();
    const busy = {
      response_type: 'ephemeral',
      text: 'Slack did not take the message. Slack asked the bot to slow down or did not answer, so nothing was posted. Try again in a minute.',
    };

    world.slack.rateLimitNext('chat.postMessage', 1);
    expect(await watch()).toMatchObject(busy);
    world.slack.answerNext('chat.postMessage', { ok: false, error: 'internal_error' }, { status: 500 });
    expect(await watch()).toMatchObject(busy);
    expect(world.slack.repliesIn(channel)).toHaveLength(0);
    await watch();
    expect(world.slack.repliesIn(channel)).toHaveLength(1);

    const metrics = await (await fetch(`${base}/metrics`)).text();
    for (const result of ['rate_limited', 'transient', 'ok'])
      expect(metrics).toContain(`slackbot_slack_calls_total{method="chat.postMessage",result="${result}"} 1`);
    expect(metrics).toMatch(
      /slackbot_requests_total\{kind="command",name="\/invoice",outcome="slack_busy"\} 2/,
    );
    expect(logs.lines.filter((l) => l.msg === 'Slack did not take the message' && 'err' in l)).toHaveLength(
      2,
    );
    expect(logs.lines.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('shows in the App Home that the service rejects the key', async () => {
    const own = await ownStore();
    const { base } = await started({ BALANCE_ALLOWED_USERS: 'U0KEYHOME' }, own);
    await serviceState(own, captureLogs().logger, { installation: ONE_WORKSPACE }).markKeyRejected(
      Date.parse('2026-11-20T10:00:00Z'),
    );
    await postToBot(
      `${base}/slack/events`,
      eventBody({
        type: 'app_home_opened',
        user: 'U0KEYHOME',
        channel: 'D0KEY',
        tab: 'home',
        event_ts: '1.3',
      }),
      SECRET,
      { contentType: 'application/json' },
    );
    await expect
      .poll(() => world.slack.homeViews.filter((v) => v.userId === 'U0KEYHOME').length, { timeout: 5000 })
      .toBe(1);
    const home = world.slack.homeViews.find((v) => v.userId === 'U0KEYHOME');
    expect(visibleText(home?.view)).toContain('the service rejects the bot’s API key');
  });

  it('says what to fix when Slack answers auth.test with an HTTP error, after its retries', async () => {
    world.slack.answerNext('auth.test', { ok: false }, { status: 503, times: 3 });
    await expect(fetchIdentity(configFor(), captureLogs().logger)).rejects.toThrow(
      `Slack answered HTTP 503 to auth.test at ${world.slack.apiUrl}`,
    );
  });

  it('names each command and event in its metrics, and counts a Slack call that failed', async () => {
    const { base } = await started({}, await ownStore());
    const send = (body: string, contentType?: string) =>
      postToBot(`${base}/slack/events`, body, SECRET, contentType ? { contentType } : {});
    await send(commandBody({ command: '/balance', text: 'help', response_url: world.slack.responseUrl() }));
    await send(linkSharedBody([`${world.sandbox.payUrl}/pay/${DEMO_INVOICE_IDS.paid}`]), 'application/json');
    const home = { type: 'app_home_opened', user: 'U0NAMES', channel: 'D0N', tab: 'home', event_ts: '1.4' };
    world.slack.answerNext('views.publish', { ok: false, error: 'not_enabled' });
    await send(eventBody(home), 'application/json');
    const names = async () =>
      [
        ...(await (await fetch(`${base}/metrics`)).text()).matchAll(
          /slackbot_requests_total\{kind="(\w+)",name="([^"]*)"/g,
        ),
      ]
        .map(([, kind, name]) => `${kind} ${name}`)
        .sort();
    await expect.poll(names).toEqual(['command /balance', 'event app_home_opened', 'event link_shared']);
    // The App Home that Slack refused is counted as a failed call.
    expect(await (await fetch(`${base}/metrics`)).text()).toContain(
      'slackbot_slack_calls_total{method="views.publish",result="error"} 1',
    );
  });
});
