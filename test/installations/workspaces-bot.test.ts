import oauth from '@slack/oauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOT_SCOPES } from '../../src/installations/oauth.js';
import { DEMO_INVOICE_IDS, demoInvoices, num, type WireInvoice } from '../../src/sandbox/data.js';
import { INSTALLATION_TABLES } from '../../src/store/installations.js';
import { visibleText } from '../support/block-kit.js';
import {
  OAUTH,
  startWorkspacesBot,
  type Workspace,
  type WorkspacesBot,
  workspace,
} from '../support/workspaces-bot.js';

/**
 * Many workspaces, in the bot assembled as src/main.ts does (test/support/workspaces-bot.ts):
 * Add to Slack's pages and redirect, requests from workspaces it does not serve, the install's
 * lifecycle events, and each workspace's own money. The end-to-end suite runs the same scenarios
 * against the built bot in a child process (test/e2e/workspaces.test.ts).
 */

let bot: WorkspacesBot;
beforeAll(async () => {
  bot = await startWorkspacesBot();
});
afterAll(async () => {
  const problems = [...bot.slack.problems];
  await bot.close();
  // Nothing the bot sent broke Block Kit's limits.
  expect(problems).toEqual([]);
});

const oauthCalls = () => bot.slack.calls.filter((c) => c.method === 'oauth.v2.access');
const dmsTo = (user: string) => bot.slack.messages.filter((m) => m.channel === user);
const linesFrom = (from: number) => bot.logs.slice(from);
const text = (value: unknown) => JSON.stringify(value);
/** How Bolt asks the installation store for a workspace's installation. */
const query = (w: Workspace) => ({ teamId: w.team, enterpriseId: undefined, isEnterpriseInstall: false });

describe('Add to Slack', () => {
  it('serves the install page: Slack’s button to its authorize page, with the bot’s scopes and a state kept in a cookie', async () => {
    const first = await bot.startInstall();
    expect(first.status).toBe(200);
    expect(first.html).toContain('<title>Add Crypto Payments to Slack</title>');
    expect(first.html).toContain('Add to <b>Slack</b>');
    // Drawn in the page: nothing loaded from another host.
    expect(first.html).not.toMatch(/\bsrc=|url\(|<link|<script/);
    expect(`${first.link.origin}${first.link.pathname}`).toBe('https://slack.com/oauth/v2/authorize');
    expect(first.link.searchParams.get('client_id')).toBe(OAUTH.clientId);
    expect(first.link.searchParams.get('scope')?.split(',')).toEqual([...BOT_SCOPES]);
    expect(first.state).not.toBe('');
    expect(first.cookie).toBe(`slack-app-oauth-state=${first.state}`);
    // A fresh state for each visit.
    expect((await bot.startInstall()).state).not.toBe(first.state);
  });

  it('installs a workspace: the installation stored sealed, the installer welcomed in a direct message with its token', async () => {
    const w = workspace('welcome');
    const from = bot.logs.length;
    const page = await bot.install(w);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).toContain('<title>Crypto Payments is installed</title>');
    expect(html).toContain('the app sent you a direct message');

    expect(oauthCalls().at(-1)?.args).toMatchObject({ code: w.code, client_id: OAUTH.clientId });
    const [welcome, ...more] = dmsTo(w.installer);
    expect(more).toEqual([]);
    expect(visibleText(welcome)).toContain(`Thanks for installing *Crypto Payments*, <@${w.installer}>`);
    expect(visibleText(welcome)).toContain('*Next step:* connect your payment account');
    const posted = bot.slack.calls.find(
      (c) => c.method === 'chat.postMessage' && c.args.channel === w.installer,
    );
    expect(posted?.token).toBe(w.token);

    expect(await bot.installations.summaryOf(w.team)).toMatchObject({
      id: w.team,
      home: { teamId: w.team, enterpriseId: undefined },
      enterpriseInstall: false,
      installerUserId: w.installer,
      account: undefined,
    });
    expect(bot.stored()).toContain(w.team);
    expect(bot.stored()).not.toContain(w.token);
    expect(linesFrom(from).find((l) => l.msg === 'installed')).toMatchObject({
      level: 'info',
      team: w.team,
      org_wide: false,
    });
    expect(linesFrom(from).find((l) => l.msg === 'installed')).not.toHaveProperty('enterprise');
  });

  it('installs for a whole organisation, stored under it, serving each of its workspaces', async () => {
    const org: Workspace = { ...workspace('org'), team: 'E0ORGWIDE' };
    const from = bot.logs.length;
    const page = await bot.install(org, {
      team: null,
      enterprise: { id: 'E0ORGWIDE', name: 'Grid' },
      is_enterprise_install: true,
    });
    expect(page.status).toBe(200);
    expect(linesFrom(from).find((l) => l.msg === 'installed')).toMatchObject({
      enterprise: 'E0ORGWIDE',
      org_wide: true,
    });
    expect(linesFrom(from).find((l) => l.msg === 'installed')).not.toHaveProperty('team');
    expect(await bot.installations.summaryOf('E0ORGWIDE')).toMatchObject({
      home: { enterpriseId: 'E0ORGWIDE' },
      enterpriseInstall: true,
      installerUserId: org.installer,
    });
    const { reply } = await bot.ask((response_url) =>
      new URLSearchParams({
        command: '/balance',
        text: '',
        response_url,
        team_id: 'T0ORGWS',
        enterprise_id: 'E0ORGWIDE',
        is_enterprise_install: 'true',
        user_id: 'U0SOMEONE',
        channel_id: 'C0SUPPORT',
        trigger_id: '1.2.3',
        api_app_id: 'A0APP',
      }).toString(),
    );
    expect(visibleText(reply)).toContain(`<@${org.installer}> (who installed the app)`);
  });

  it('still installs when the welcome cannot be sent, and says so in the log', async () => {
    const w = workspace('unwelcome');
    const from = bot.logs.length;
    bot.slack.answerNext('chat.postMessage', { ok: false, error: 'messages_tab_disabled' });
    const page = await bot.install(w);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Crypto Payments is installed');
    expect((await bot.installations.summaryOf(w.team))?.installerUserId).toBe(w.installer);
    expect(await bot.logged('could not welcome the installer', from)).toMatchObject({
      level: 'warn',
      team: w.team,
    });
  });

  /** The failure page, its status and reason, and that nothing was installed or exchanged. */
  async function refused(response: Response, reason: string, code: string, from: number, w?: Workspace) {
    expect(response.status).toBe(400);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const html = await response.text();
    expect(html).toContain('<title>The app was not installed</title>');
    expect(html).toContain(`${reason} Nothing was installed and nothing was changed.`);
    expect(html).toContain('<a href="/slack/install">Start the install again</a>');
    expect(linesFrom(from).find((l) => String(l.msg).startsWith('install refused:'))).toMatchObject({
      level: 'warn',
      code,
    });
    if (w) expect(await bot.installations.summaryOf(w.team)).toBeUndefined();
  }
  const EXPIRED =
    'This install link has expired, was used already, or was started in another browser (installs started from Slack’s own pages must start here instead).';

  it('refuses an expired state, a forged one, one without its cookie and a missing one, exchanging no code', async () => {
    const w = workspace('stale');
    bot.offerCode(w);
    const exchanged = oauthCalls().length;
    // Signed with the bot's state secret, eleven minutes ago: older than the ten minutes a state is good for.
    const expired = await new oauth.ClearStateStore(OAUTH.stateSecret).generateStateParam(
      { scopes: [...BOT_SCOPES] },
      new Date(Date.now() - 11 * 60_000),
    );
    let from = bot.logs.length;
    await refused(
      await bot.redirect({ code: w.code, state: expired }, `slack-app-oauth-state=${expired}`),
      EXPIRED,
      'slack_oauth_invalid_state',
      from,
      w,
    );
    const { state, cookie } = await bot.startInstall();
    for (const [query, withCookie] of [
      [
        { code: w.code, state: `${state.slice(0, -4)}AAAA` },
        `slack-app-oauth-state=${state.slice(0, -4)}AAAA`,
      ],
      [{ code: w.code, state }, undefined],
    ] as const) {
      from = bot.logs.length;
      await refused(await bot.redirect(query, withCookie), EXPIRED, 'slack_oauth_invalid_state', from, w);
    }
    from = bot.logs.length;
    await refused(
      await bot.redirect({ code: w.code }, cookie),
      EXPIRED,
      'slack_oauth_missing_state',
      from,
      w,
    );
    expect(oauthCalls()).toHaveLength(exchanged);

    // The good state, once: installed; the same state again is refused before any exchange.
    expect((await bot.redirect({ code: w.code, state }, cookie)).status).toBe(200);
    bot.offerCode(w);
    from = bot.logs.length;
    await refused(
      await bot.redirect({ code: w.code, state }, cookie),
      EXPIRED,
      'slack_oauth_invalid_state',
      from,
    );
    expect(oauthCalls()).toHaveLength(exchanged + 1);
  });

  it('says the install was cancelled when the person cancelled it in Slack', async () => {
    const { cookie } = await bot.startInstall();
    const from = bot.logs.length;
    await refused(
      await bot.redirect({ error: 'access_denied' }, cookie),
      'The install was cancelled in Slack.',
      'slack_oauth_installer_authorization_error',
      from,
    );
  });

  it('says Slack did not complete the install when Slack refuses the code: nothing stored, nobody welcomed', async () => {
    const w = workspace('refused');
    const { state, cookie } = await bot.startInstall();
    const from = bot.logs.length;
    // No code was offered: oauth.v2.access answers invalid_code.
    const response = await bot.redirect({ code: 'code-nobody-offered', state }, cookie);
    expect(oauthCalls().at(-1)?.args.code).toBe('code-nobody-offered');
    await refused(response, 'Slack did not complete the install.', 'slack_webapi_platform_error', from);
    expect(linesFrom(from).find((l) => String(l.msg).startsWith('install refused:'))?.msg).toContain(
      'invalid_code',
    );
    expect(await bot.installations.summaryOf(w.team)).toBeUndefined();
    expect(dmsTo(w.installer)).toEqual([]);
  });
});

describe('installing again', () => {
  it('welcomes the installer again when they reinstall before connecting', async () => {
    const w = workspace('twice');
    await bot.install(w);
    await bot.install({ ...w, code: 'code-twice-again' });
    expect(dmsTo(w.installer).map((m) => visibleText(m))).toEqual([
      expect.stringContaining('Thanks for installing'),
      expect.stringContaining('Thanks for installing'),
    ]);
  });

  it('hands nothing over when a member installs again before the account is connected', async () => {
    const w = workspace('early');
    await bot.install(w);
    await bot.install({ ...w, installer: 'U0EARLYMEMBER', code: 'code-early-again' });
    const [told, ...more] = dmsTo('U0EARLYMEMBER');
    expect(more).toEqual([]);
    expect(visibleText(told)).toContain(
      '<@U0EARLYMEMBER>, *Crypto Payments* was installed again in this workspace',
    );
    expect(visibleText(told)).toContain(
      `The payment account is not connected yet. <@${w.installer}> (who installed the app)`,
    );
    expect((await bot.installations.summaryOf(w.team))?.installerUserId).toBe(w.installer);
    const { reply } = await bot.command(w, 'U0EARLYMEMBER', '');
    expect(visibleText(reply)).toContain(`<@${w.installer}> (who installed the app)`);
  });

  it('hands nothing over when a member installs again: the account, its manager and its money stay', async () => {
    const w = workspace('again');
    bot.slack.people.set('U0AGAINBOSS', { team_id: w.team, is_admin: true });
    bot.slack.people.set('U0AGAINMEMBER', { team_id: w.team });
    await bot.install(w);
    const key = 'merchant-again-unit-key-5e4d3c2b';
    bot.sandbox.addMerchant(key, {
      balances: [{ id: 'XMR', title: 'Monero', balance: num('3.14') }],
      invoices: [],
    });
    expect((await bot.submitKey(w, 'U0AGAINBOSS', key)).body).toBe('');

    // Any member may run Add to Slack; Slack gives the same bot token back.
    const page = await bot.install({ ...w, installer: 'U0AGAINMEMBER', code: 'code-again-member' });
    expect(page.status).toBe(200);
    const told = visibleText(dmsTo('U0AGAINMEMBER')[0]);
    expect(told).toContain('installed again');
    expect(told).toContain('The payment account stays connected, managed by <@U0AGAINBOSS>');
    expect(await bot.installations.summaryOf(w.team)).toMatchObject({
      installerUserId: w.installer,
      account: { connectedBy: 'U0AGAINBOSS' },
    });
    expect(await bot.installations.paymentKeyOf(w.team)).toBe(key);
    const asked = bot.sandbox.requests.length;
    expect(
      (await bot.submitKey(w, 'U0AGAINMEMBER', 'the-members-own-merchant-key-77aa')).json(),
    ).toMatchObject({
      response_action: 'errors',
      errors: { api_key: expect.stringContaining('Only the person who connected') },
    });
    expect(bot.sandbox.requests).toHaveLength(asked);
    const memberHome = await bot.homeFor(w, 'U0AGAINMEMBER');
    expect(memberHome).not.toContain('connect_payment_account');
    expect(memberHome).toContain('Connected by <@U0AGAINBOSS>');
    expect(visibleText((await bot.command(w, 'U0AGAINMEMBER', '')).reply)).toContain('3.14');

    // The installer reinstalling once the account is connected is told the same, not welcomed as new.
    await bot.install({ ...w, code: 'code-again-installer' });
    expect(visibleText(dmsTo(w.installer).at(-1))).toContain('managed by <@U0AGAINBOSS>');
  });
});

describe('a rotating token', () => {
  const refreshes = (refreshToken: string) =>
    oauthCalls().filter(
      (c) => c.args.grant_type === 'refresh_token' && c.args.refresh_token === refreshToken,
    );

  it('is refreshed with the app’s client before it expires, once, and the new one kept sealed', async () => {
    const w = { ...workspace('rotating'), token: 'xoxe.xoxb-rotating-unit-first-token-1c2d' };
    const first = 'xoxe-1-rotating-unit-first-refresh-3e4f';
    expect((await bot.install(w, { refresh_token: first, expires_in: 60 })).status).toBe(200);
    const from = bot.logs.length;
    const { reply } = await bot.command(w, w.installer, '');
    // Nothing to warn an operator about: a refresh is routine.
    expect(linesFrom(from).filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    expect(visibleText(reply)).toContain('not connected yet');
    const [refresh, ...more] = refreshes(first);
    expect(more).toEqual([]);
    expect(refresh?.args).toMatchObject({ client_id: OAUTH.clientId, client_secret: OAUTH.clientSecret });
    const kept = await bot.installations.fetchInstallation(query(w));
    expect(kept.bot?.token).toMatch(/^xoxe\.xoxb-rotated-/);
    expect(kept.bot?.refreshToken).not.toBe(first);
    expect(bot.stored()).not.toContain(kept.bot?.token);
    // The new token serves the next request, with no refresh.
    const calls = bot.slack.calls.length;
    await bot.homeFor(w, w.installer);
    expect(bot.slack.calls.slice(calls).map((c) => c.token)).toEqual(
      bot.slack.calls.slice(calls).map(() => kept.bot?.token),
    );
    expect(
      oauthCalls().filter(
        (c) => c.args.grant_type === 'refresh_token' && c.args.refresh_token === kept.bot?.refreshToken,
      ),
    ).toEqual([]);
  });

  it('a refresh Slack cannot answer is tried once, said in the log; the token it has serves, and the next request tries again', async () => {
    const w = { ...workspace('unrefreshed'), token: 'xoxe.xoxb-unrefreshed-unit-token-5a6b' };
    const first = 'xoxe-1-unrefreshed-unit-refresh-7c8d';
    expect((await bot.install(w, { refresh_token: first, expires_in: 600 })).status).toBe(200);
    const from = bot.logs.length;
    bot.slack.answerNext('oauth.v2.access', { ok: false, error: 'internal_error' }, { status: 500 });
    const { reply } = await bot.command(w, w.installer, '');
    expect(visibleText(reply)).toContain('not connected yet');
    // One attempt, not the SDK's retries: a refresh ends within one Slack deadline, inside its lease.
    expect(refreshes(first)).toHaveLength(1);
    // A warning, not an error: the token it has still serves.
    expect(linesFrom(from).map((l) => `${String(l.level)} ${String(l.msg)}`)).toContainEqual(
      expect.stringMatching(/^warn .*oauth\.v2\.access API call for token rotation/),
    );
    expect(linesFrom(from).filter((l) => l.level === 'error')).toEqual([]);
    expect((await bot.installations.fetchInstallation(query(w))).bot?.token).toBe(w.token);
    expect(visibleText((await bot.command(w, w.installer, '')).reply)).toContain('not connected yet');
    expect(refreshes(first)).toHaveLength(2);
    expect((await bot.installations.fetchInstallation(query(w))).bot?.token).toMatch(/^xoxe\.xoxb-rotated-/);
  });
});

describe('a workspace the bot does not serve', () => {
  it('is refused at authorization, logged as a warning naming it, never as an error, and nothing is sent', async () => {
    const from = bot.logs.length;
    const calls = bot.slack.calls.length;
    const responseUrl = bot.slack.responseUrl();
    const ack = await bot.post(
      new URLSearchParams({
        command: '/balance',
        text: '',
        response_url: responseUrl,
        team_id: 'T0STRANGER',
        user_id: 'U0STRANGER',
        channel_id: 'C0SUPPORT',
        api_app_id: 'A0APP',
        trigger_id: '1.2.3',
      }).toString(),
    );
    expect(ack.status).toBe(200);
    expect(ack.body).toBe('');
    const line = await bot.logged('a Slack request was not authorized', from);
    expect(line.level).toBe('warn');
    expect(text(line.err)).toContain('no installation for T0STRANGER');
    expect(linesFrom(from).filter((l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
    expect(bot.slack.calls.slice(calls)).toEqual([]);
    expect(bot.slack.posts.filter((p) => p.url === responseUrl)).toEqual([]);
  });
});

describe('the assembly', () => {
  it('says it started for many workspaces in HTTP mode, and answers the operator’s routes', async () => {
    expect(bot.logs.find((l) => l.msg === 'bot started')).toMatchObject({
      mode: 'http',
      tenancy: 'many',
      port: Number(new URL(bot.url).port),
    });
    expect((await fetch(`${bot.url}/healthz`)).status).toBe(200);
    const metrics = await fetch(`${bot.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/slackbot_installation_requests_total\{installation="T0[A-Z]+"/);
  });
});

describe('uninstalling', () => {
  /** Installs `w` with a payment account, a watch and a feed, so that it owns rows in the store. */
  async function busy(w: Workspace, key: string) {
    bot.slack.people.set(w.installer, { team_id: w.team });
    await bot.install(w);
    bot.sandbox.addMerchant(key, {
      balances: [{ id: 'XMR', title: 'Monero', balance: num('1') }],
      invoices: bot.sandbox.invoices.filter((i) => i.id === DEMO_INVOICE_IDS.open),
    });
    expect((await bot.submitKey(w, w.installer, key)).body).toBe('');
    const channel = `G0${w.team}`;
    bot.slack.conversations.set(channel, { id: channel, is_private: true });
    const watch = await bot.command(w, w.installer, `watch ${DEMO_INVOICE_IDS.open}`, {
      command: '/invoice',
      channel,
    });
    expect(text(watch.reply)).not.toContain('warning');
    const feed = await bot.command(w, w.installer, 'subscribe', { channel });
    expect(text(feed.reply)).toContain('the payments feed is on in this channel');
  }
  const owned = async (id: string) => {
    const counts: Record<string, number> = {};
    for (const table of INSTALLATION_TABLES) {
      const rows = await bot.store.db
        .selectFrom(table)
        .select('installation_id')
        .where('installation_id', '=', id)
        .execute();
      if (rows.length > 0) counts[table] = rows.length;
    }
    return counts;
  };
  const refusedNow = async (w: Workspace) => {
    const from = bot.logs.length;
    const ack = await bot.post(
      new URLSearchParams({
        command: '/balance',
        text: '',
        response_url: bot.slack.responseUrl(),
        team_id: w.team,
        user_id: w.installer,
        api_app_id: 'A0APP',
      }).toString(),
    );
    expect(ack.body).toBe('');
    expect(text((await bot.logged('a Slack request was not authorized', from)).err)).toContain(
      `no installation for ${w.team}`,
    );
  };

  it('app_uninstalled deletes the installation and everything it owns, once; the other workspace goes on', async () => {
    const gone = workspace('gone');
    const stays = workspace('stays');
    await busy(gone, 'merchant-gone-unit-key-1a2b3c4d');
    await busy(stays, 'merchant-stays-unit-key-5e6f7a8b');
    expect(Object.keys(await owned(gone.team))).toEqual(
      expect.arrayContaining(['watches', 'feed_subscriptions']),
    );
    const before = await owned(stays.team);

    let from = bot.logs.length;
    // Slack's event_time is in whole seconds: this second, rounded up, is after the install.
    const now = { eventTime: Math.ceil(Date.now() / 1000) };
    expect((await bot.event(gone, { type: 'app_uninstalled' }, now)).status).toBe(200);
    expect(await bot.logged('uninstalled: its tokens and payment key are deleted', from)).toMatchObject({
      level: 'info',
      installation: gone.team,
      deleted: true,
    });
    expect(await bot.installations.summaryOf(gone.team)).toBeUndefined();
    expect(await owned(gone.team)).toEqual({});
    from = bot.logs.length;
    expect((await bot.event(gone, { type: 'app_uninstalled' }, now)).status).toBe(200);
    expect(await bot.logged('uninstalled: nothing left to delete', from)).toMatchObject({
      installation: gone.team,
      deleted: false,
    });
    await refusedNow(gone);

    expect(await owned(stays.team)).toEqual(before);
    expect(visibleText((await bot.command(stays, stays.installer, '')).reply)).toContain('Monero');
  });

  it('a late app_uninstalled, from before the workspace installed again, deletes nothing of the new install', async () => {
    const w = workspace('late');
    const earlier = Math.floor(Date.now() / 1000) - 60;
    await bot.install(w);
    const from = bot.logs.length;
    await bot.event(w, { type: 'app_uninstalled' }, { eventTime: earlier });
    expect(await bot.logged('uninstalled: nothing left to delete', from)).toMatchObject({
      installation: w.team,
    });
    expect((await bot.installations.summaryOf(w.team))?.installerUserId).toBe(w.installer);
    expect(visibleText((await bot.command(w, w.installer, '')).reply)).toContain('not connected yet');
  });

  it('installed again by someone else after an uninstall, it names its new installer, nothing kept of the old one', async () => {
    const w = workspace('anew');
    await bot.install(w);
    expect(visibleText((await bot.command(w, 'U0ANEWMEMBER', '')).reply)).toContain(`<@${w.installer}>`);
    await bot.event(w, { type: 'app_uninstalled' }, { eventTime: Math.ceil(Date.now() / 1000) });
    await expect.poll(() => bot.installations.summaryOf(w.team), { timeout: 3000 }).toBeUndefined();
    // Slack gives the same bot token to the new install.
    await bot.install({ ...w, installer: 'U0ANEWSECOND', code: 'code-anew-second' });
    expect(visibleText(dmsTo('U0ANEWSECOND')[0])).toContain('Thanks for installing');
    const { reply } = await bot.command(w, 'U0ANEWMEMBER', '');
    expect(visibleText(reply)).toContain('<@U0ANEWSECOND> (who installed the app)');
    expect(visibleText(reply)).not.toContain(w.installer);
  });

  it('tokens_revoked forgets the bot token, keeps the account until app_uninstalled, and requests are refused', async () => {
    const w = workspace('revoked');
    await busy(w, 'merchant-revoked-unit-key-9c8d7e6f');
    const from = bot.logs.length;
    expect(
      (await bot.event(w, { type: 'tokens_revoked', tokens: { bot: [`U0BOT${w.team.slice(2)}`] } })).status,
    ).toBe(200);
    expect(await bot.logged('bot token revoked: forgotten', from)).toMatchObject({
      level: 'info',
      installation: w.team,
    });
    const row = await bot.store.db
      .selectFrom('installations')
      .select(['bot_token', 'payment_api_key'])
      .where('id', '=', w.team)
      .executeTakeFirstOrThrow();
    expect(row.bot_token).toBeNull();
    expect(row.payment_api_key).not.toBeNull();
    expect((await bot.installations.summaryOf(w.team))?.account?.connectedBy).toBe(w.installer);
    await refusedNow(w);
    // Nothing more is sent with the revoked token, though its watch is still in the store.
    const calls = bot.slack.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(bot.slack.calls.slice(calls).filter((c) => c.token === w.token)).toEqual([]);
  });

  it('tokens_revoked of user tokens only leaves the bot token alone', async () => {
    const w = workspace('usertokens');
    await bot.install(w);
    const from = bot.logs.length;
    await bot.event(w, { type: 'tokens_revoked', tokens: { oauth: ['U0SOMEUSER'] } });
    await bot.event(w, { type: 'tokens_revoked', tokens: { bot: [] } });
    // Both handled: the log has each event's request line, and no token was forgotten.
    await expect
      .poll(() => linesFrom(from).filter((l) => l.name === 'tokens_revoked' && l.outcome === 'ok'), {
        timeout: 3000,
      })
      .toHaveLength(2);
    expect(linesFrom(from).filter((l) => l.msg === 'bot token revoked: forgotten')).toEqual([]);
    expect(visibleText((await bot.command(w, w.installer, '')).reply)).toContain('not connected yet');
  });
});

describe('each workspace reads its own money', () => {
  it('answers commands and Home tabs with its own key and token; the other’s invoice does not exist for it', async () => {
    const one = workspace('moneyone');
    const two = workspace('moneytwo');
    const oneKey = 'merchant-moneyone-unit-key-0a9b8c7d';
    const oneInvoiceId = 'a1a1a1a1-1111-4aaa-8bbb-0123456789ab';
    const oneInvoice: WireInvoice = {
      ...(demoInvoices(bot.sandbox.payUrl)[0] as WireInvoice),
      id: oneInvoiceId,
      title: 'Espresso machine service',
      link: `${bot.sandbox.payUrl}/pay/${oneInvoiceId}`,
      shop: { title: 'One Coffee Roasters', successUrl: null, failUrl: null },
    };
    bot.sandbox.addMerchant(oneKey, {
      balances: [{ id: 'XMR', title: 'Monero', balance: num('77.7777') }],
      invoices: [oneInvoice],
    });
    for (const w of [one, two]) {
      bot.slack.people.set(w.installer, { team_id: w.team });
      await bot.install(w);
    }
    expect((await bot.submitKey(one, one.installer, oneKey)).body).toBe('');
    expect((await bot.submitKey(two, two.installer, bot.sandbox.apiKey)).body).toBe('');
    const asked = bot.sandbox.requests.length;
    const calls = bot.slack.calls.length;

    const [oneBalance, twoBalance, oneOwn, twoOwn, oneOther, twoOther] = await Promise.all([
      bot.command(one, one.installer, ''),
      bot.command(two, two.installer, ''),
      bot.command(one, one.installer, oneInvoiceId, { command: '/invoice' }),
      bot.command(two, two.installer, DEMO_INVOICE_IDS.open, { command: '/invoice' }),
      bot.command(one, one.installer, DEMO_INVOICE_IDS.open, { command: '/invoice' }),
      bot.command(two, two.installer, oneInvoiceId, { command: '/invoice' }),
    ]);
    expect(visibleText(oneBalance.reply)).toContain('Monero');
    expect(visibleText(oneBalance.reply)).not.toContain('Bitcoin');
    expect(visibleText(twoBalance.reply)).toContain('Bitcoin');
    expect(visibleText(twoBalance.reply)).not.toContain('Monero');
    expect(visibleText(oneOwn.reply)).toContain('One Coffee Roasters');
    expect(visibleText(twoOwn.reply)).toContain('Acme Hardware Store');
    expect(visibleText(oneOther.reply)).toContain('Invoice not found');
    expect(visibleText(twoOther.reply)).toContain('Invoice not found');
    expect(text(oneOther.reply)).not.toContain('Acme Hardware Store');
    expect(text(twoOther.reply)).not.toContain('One Coffee Roasters');

    const homes = { one: await bot.homeFor(one, one.installer), two: await bot.homeFor(two, two.installer) };
    expect(homes.one).toContain('Monero');
    expect(homes.one).not.toContain('Bitcoin');
    expect(homes.two).toContain('Bitcoin');
    expect(homes.two).not.toContain('Monero');

    // Each workspace's calls carried its own key, and its Home was published with its own token.
    expect(new Set(bot.sandbox.requests.slice(asked).map((q) => q.authorization))).toEqual(
      new Set([`Token ${oneKey}`, `Token ${bot.sandbox.apiKey}`]),
    );
    const publishes = bot.slack.calls.slice(calls).filter((c) => c.method === 'views.publish');
    expect([...new Set(publishes.map((c) => `${c.args.user_id} ${c.token}`))]).toEqual([
      `${one.installer} ${one.token}`,
      `${two.installer} ${two.token}`,
    ]);
  });

  it('never wrote a token, a payment key, the client secret or the encryption key to its log', () => {
    const raw = bot.rawLogs;
    expect(raw).toContain('installed');
    for (const secret of [
      OAUTH.clientSecret,
      OAUTH.stateSecret,
      bot.config.slack.signingSecret,
      bot.config.encryption.current.toString('base64'),
      bot.sandbox.apiKey,
      'merchant-moneyone-unit-key-0a9b8c7d',
      'merchant-gone-unit-key-1a2b3c4d',
      ...bot.slack.calls.flatMap((c) => (c.token ? [c.token] : [])),
    ])
      expect(raw).not.toContain(secret);
  });
});
