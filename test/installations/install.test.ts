import oauth from '@slack/oauth';
import { describe, expect, it } from 'vitest';
import { BOT_SCOPES } from '../../src/installations/oauth.js';
import { num } from '../../src/sandbox/data.js';
import { installationId } from '../../src/store/keys.js';
import { visibleText } from '../support/block-kit.js';
import { OAUTH, useWorkspacesBot, type Workspace, workspace } from '../support/workspaces-bot.js';

/**
 * Installing the many-workspaces bot, assembled as src/main.ts does (test/support/workspaces-bot.ts):
 * Add to Slack's page and redirect, installing again, and its rotating tokens. The end-to-end
 * suite runs the same scenarios against the built bot in a child process (test/e2e/workspaces.test.ts).
 */

const many = useWorkspacesBot();

const oauthCalls = () => many.bot.slack.calls.filter((c) => c.method === 'oauth.v2.access');
const dmsTo = (user: string) => many.bot.slack.messages.filter((m) => m.channel === user);
const linesFrom = (from: number) => many.bot.logs.slice(from);
/** How Bolt asks the installation store for a workspace's installation. */
const query = (w: Workspace) => ({ teamId: w.team, enterpriseId: undefined, isEnterpriseInstall: false });

describe('Add to Slack', () => {
  it('serves the install page: Slack’s button to its authorize page, with the bot’s scopes and a state kept in a cookie', async () => {
    const first = await many.bot.startInstall();
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
    expect((await many.bot.startInstall()).state).not.toBe(first.state);
  });

  it('installs a workspace: the installation stored sealed, the installer welcomed in a direct message with its token', async () => {
    const w = workspace('welcome');
    const from = many.bot.logs.length;
    const page = await many.bot.install(w);
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
    const posted = many.bot.slack.calls.find(
      (c) => c.method === 'chat.postMessage' && c.args.channel === w.installer,
    );
    expect(posted?.token).toBe(w.token);

    expect(await many.bot.installations.summaryOf(w.team)).toMatchObject({
      id: w.team,
      home: { teamId: w.team, enterpriseId: undefined },
      enterpriseInstall: false,
      installerUserId: w.installer,
      account: undefined,
    });
    expect(many.bot.stored()).toContain(w.team);
    expect(many.bot.stored()).not.toContain(w.token);
    expect(linesFrom(from).find((l) => l.msg === 'installed')).toMatchObject({
      level: 'info',
      team: w.team,
      org_wide: false,
    });
    expect(linesFrom(from).find((l) => l.msg === 'installed')).not.toHaveProperty('enterprise');
  });

  it('installs for a whole organisation, stored under it, serving each of its workspaces', async () => {
    const org: Workspace = { ...workspace('org'), team: installationId('E0ORGWIDE') };
    const from = many.bot.logs.length;
    const page = await many.bot.install(org, {
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
    expect(await many.bot.installations.summaryOf(installationId('E0ORGWIDE'))).toMatchObject({
      home: { enterpriseId: 'E0ORGWIDE' },
      enterpriseInstall: true,
      installerUserId: org.installer,
    });
    const { reply } = await many.bot.ask((response_url) =>
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
    const from = many.bot.logs.length;
    many.bot.slack.answerNext('chat.postMessage', { ok: false, error: 'messages_tab_disabled' });
    const page = await many.bot.install(w);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Crypto Payments is installed');
    expect((await many.bot.installations.summaryOf(w.team))?.installerUserId).toBe(w.installer);
    expect(await many.bot.logged('could not welcome the installer', from)).toMatchObject({
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
    if (w) expect(await many.bot.installations.summaryOf(w.team)).toBeUndefined();
  }
  const EXPIRED =
    'This install link has expired, was used already, or was started in another browser (installs started from Slack’s own pages must start here instead).';

  it('refuses an expired state, a forged one, one without its cookie and a missing one, exchanging no code', async () => {
    const w = workspace('stale');
    many.bot.offerCode(w);
    const exchanged = oauthCalls().length;
    // Signed with the bot's state secret, eleven minutes ago: older than the ten minutes a state is good for.
    const expired = await new oauth.ClearStateStore(OAUTH.stateSecret).generateStateParam(
      { scopes: [...BOT_SCOPES] },
      new Date(Date.now() - 11 * 60_000),
    );
    let from = many.bot.logs.length;
    await refused(
      await many.bot.redirect({ code: w.code, state: expired }, `slack-app-oauth-state=${expired}`),
      EXPIRED,
      'slack_oauth_invalid_state',
      from,
      w,
    );
    const { state, cookie } = await many.bot.startInstall();
    for (const [query, withCookie] of [
      [
        { code: w.code, state: `${state.slice(0, -4)}AAAA` },
        `slack-app-oauth-state=${state.slice(0, -4)}AAAA`,
      ],
      [{ code: w.code, state }, undefined],
    ] as const) {
      from = many.bot.logs.length;
      await refused(
        await many.bot.redirect(query, withCookie),
        EXPIRED,
        'slack_oauth_invalid_state',
        from,
        w,
      );
    }
    from = many.bot.logs.length;
    await refused(
      await many.bot.redirect({ code: w.code }, cookie),
      EXPIRED,
      'slack_oauth_missing_state',
      from,
      w,
    );
    expect(oauthCalls()).toHaveLength(exchanged);

    // The good state, once: installed; the same state again is refused before any exchange.
    expect((await many.bot.redirect({ code: w.code, state }, cookie)).status).toBe(200);
    many.bot.offerCode(w);
    from = many.bot.logs.length;
    await refused(
      await many.bot.redirect({ code: w.code, state }, cookie),
      EXPIRED,
      'slack_oauth_invalid_state',
      from,
    );
    expect(oauthCalls()).toHaveLength(exchanged + 1);
  });

  it('says the install was cancelled when the person cancelled it in Slack', async () => {
    const { cookie } = await many.bot.startInstall();
    const from = many.bot.logs.length;
    await refused(
      await many.bot.redirect({ error: 'access_denied' }, cookie),
      'The install was cancelled in Slack.',
      'slack_oauth_installer_authorization_error',
      from,
    );
  });

  it('says Slack did not complete the install when Slack refuses the code: nothing stored, nobody welcomed', async () => {
    const w = workspace('refused');
    const { state, cookie } = await many.bot.startInstall();
    const from = many.bot.logs.length;
    // No code was offered: oauth.v2.access answers invalid_code.
    const response = await many.bot.redirect({ code: 'code-nobody-offered', state }, cookie);
    expect(oauthCalls().at(-1)?.args.code).toBe('code-nobody-offered');
    await refused(response, 'Slack did not complete the install.', 'slack_webapi_platform_error', from);
    expect(linesFrom(from).find((l) => String(l.msg).startsWith('install refused:'))?.msg).toContain(
      'invalid_code',
    );
    expect(await many.bot.installations.summaryOf(w.team)).toBeUndefined();
    expect(dmsTo(w.installer)).toEqual([]);
  });
});

describe('installing again', () => {
  it('welcomes the installer again when they reinstall before connecting', async () => {
    const w = workspace('twice');
    await many.bot.install(w);
    await many.bot.install({ ...w, code: 'code-twice-again' });
    expect(dmsTo(w.installer).map((m) => visibleText(m))).toEqual([
      expect.stringContaining('Thanks for installing'),
      expect.stringContaining('Thanks for installing'),
    ]);
  });

  it('hands nothing over when a member installs again before the account is connected', async () => {
    const w = workspace('early');
    await many.bot.install(w);
    await many.bot.install({ ...w, installer: 'U0EARLYMEMBER', code: 'code-early-again' });
    const [told, ...more] = dmsTo('U0EARLYMEMBER');
    expect(more).toEqual([]);
    expect(visibleText(told)).toContain(
      '<@U0EARLYMEMBER>, *Crypto Payments* was installed again in this workspace',
    );
    expect(visibleText(told)).toContain(
      `The payment account is not connected. <@${w.installer}> (who installed the app)`,
    );
    expect((await many.bot.installations.summaryOf(w.team))?.installerUserId).toBe(w.installer);
    const { reply } = await many.bot.command(w, 'U0EARLYMEMBER', '');
    expect(visibleText(reply)).toContain(`<@${w.installer}> (who installed the app)`);
  });

  it('hands nothing over when a member installs again: the account, its manager and its money stay', async () => {
    const w = workspace('again');
    many.bot.slack.people.set('U0AGAINBOSS', { team_id: w.team, is_admin: true });
    many.bot.slack.people.set('U0AGAINMEMBER', { team_id: w.team });
    await many.bot.install(w);
    const key = 'merchant-again-unit-key-5e4d3c2b';
    many.bot.sandbox.addMerchant(key, {
      balances: [{ id: 'XMR', title: 'Monero', balance: num('3.14') }],
      invoices: [],
    });
    expect((await many.bot.submitKey(w, 'U0AGAINBOSS', key)).body).toBe('');

    // Any member may run Add to Slack; Slack gives the same bot token back.
    const page = await many.bot.install({ ...w, installer: 'U0AGAINMEMBER', code: 'code-again-member' });
    expect(page.status).toBe(200);
    const told = visibleText(dmsTo('U0AGAINMEMBER')[0]);
    expect(told).toContain('installed again');
    expect(told).toContain('The payment account stays connected, managed by <@U0AGAINBOSS>');
    expect(await many.bot.installations.summaryOf(w.team)).toMatchObject({
      installerUserId: w.installer,
      account: { connectedBy: 'U0AGAINBOSS' },
    });
    expect(await many.bot.installations.paymentKeyOf(w.team)).toBe(key);
    const asked = many.bot.sandbox.requests.length;
    expect(
      (await many.bot.submitKey(w, 'U0AGAINMEMBER', 'the-members-own-merchant-key-77aa')).json(),
    ).toMatchObject({
      response_action: 'errors',
      errors: { api_key: expect.stringContaining('Only the person who connected') },
    });
    expect(many.bot.sandbox.requests).toHaveLength(asked);
    const memberHome = await many.bot.homeFor(w, 'U0AGAINMEMBER');
    expect(memberHome).not.toContain('connect_payment_account');
    expect(memberHome).toContain('Connected by <@U0AGAINBOSS>');
    expect(visibleText((await many.bot.command(w, 'U0AGAINMEMBER', '')).reply)).toContain('3.14');

    // The installer reinstalling once the account is connected is told the same, not welcomed as new.
    await many.bot.install({ ...w, code: 'code-again-installer' });
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
    expect((await many.bot.install(w, { refresh_token: first, expires_in: 60 })).status).toBe(200);
    const from = many.bot.logs.length;
    const { reply } = await many.bot.command(w, w.installer, '');
    // Nothing to warn an operator about: a refresh is routine.
    expect(linesFrom(from).filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    expect(visibleText(reply)).toContain('not connected');
    const [refresh, ...more] = refreshes(first);
    expect(more).toEqual([]);
    expect(refresh?.args).toMatchObject({ client_id: OAUTH.clientId, client_secret: OAUTH.clientSecret });
    const kept = await many.bot.installations.fetchInstallation(query(w));
    expect(kept.bot?.token).toMatch(/^xoxe\.xoxb-rotated-/);
    expect(kept.bot?.refreshToken).not.toBe(first);
    expect(many.bot.stored()).not.toContain(kept.bot?.token);
    // The new token serves the next request, with no refresh.
    const calls = many.bot.slack.calls.length;
    await many.bot.homeFor(w, w.installer);
    expect(many.bot.slack.calls.slice(calls).map((c) => c.token)).toEqual(
      many.bot.slack.calls.slice(calls).map(() => kept.bot?.token),
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
    expect((await many.bot.install(w, { refresh_token: first, expires_in: 600 })).status).toBe(200);
    const from = many.bot.logs.length;
    many.bot.slack.answerNext('oauth.v2.access', { ok: false, error: 'internal_error' }, { status: 500 });
    const { reply } = await many.bot.command(w, w.installer, '');
    expect(visibleText(reply)).toContain('not connected');
    // One attempt, not the SDK's retries: a refresh ends within one Slack deadline, inside its lease.
    expect(refreshes(first)).toHaveLength(1);
    // A warning, not an error: the token it has still serves.
    expect(linesFrom(from).map((l) => `${String(l.level)} ${String(l.msg)}`)).toContainEqual(
      expect.stringMatching(/^warn .*oauth\.v2\.access API call for token rotation/),
    );
    expect(linesFrom(from).filter((l) => l.level === 'error')).toEqual([]);
    expect((await many.bot.installations.fetchInstallation(query(w))).bot?.token).toBe(w.token);
    expect(visibleText((await many.bot.command(w, w.installer, '')).reply)).toContain('not connected');
    expect(refreshes(first)).toHaveLength(2);
    expect((await many.bot.installations.fetchInstallation(query(w))).bot?.token).toMatch(
      /^xoxe\.xoxb-rotated-/,
    );
  });
});
