import { describe, expect, it } from 'vitest';
import { commandBody, postToBot } from '../support/slack-requests.js';
import { askBot, SECRETS, until } from './harness.js';
import {
  balanceFrom,
  bot,
  event,
  homeFor,
  refusedBalance,
  sandbox,
  slack,
  stored,
  submitKey,
  WORKSPACES,
} from './workspaces-stack.js';

/** The many-workspaces scenario's payment accounts: before one is connected, and connecting one. */

export function beforeConnecting(): void {
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
}

export function connecting(): void {
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
}
