import { describe, expect, it } from 'vitest';
import { commandBody } from '../support/slack-requests.js';
import { askBot, SECRETS, startBot, until } from './harness.js';
import {
  balanceFrom,
  bot,
  CLIENT,
  database,
  event,
  homeFor,
  install,
  KEY,
  manyEnv,
  ONE_KEY,
  offerCode,
  redirect,
  refusedBalance,
  sandbox,
  slack,
  startInstall,
  stored,
  submitKey,
  WORKSPACES,
  type Workspace,
} from './workspaces-stack.js';

/** The many-workspaces scenario's installs: through Add to Slack, again by a member, and uninstalling. */

export function installing(name: string): void {
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
}

export function installingAgain(): void {
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
}

export function uninstalling(): void {
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
}
