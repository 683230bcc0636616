import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { installationId } from '../../src/store/keys.js';
import { visibleText } from '../support/block-kit.js';
import { commandBody } from '../support/slack-requests.js';
import { type Workspace, workspace } from '../support/workspaces-bot.js';
import {
  calls,
  installed,
  many,
  modalsSince,
  person,
  text,
  usePaymentAccountBot,
} from './payment-account-setup.js';

/** A workspace's payment account before it is connected, and who may open the Connect modal. */

usePaymentAccountBot();

describe('before the payment account is connected', () => {
  it('answers /balance privately, naming who can connect it, and asks the payment service nothing', async () => {
    const w = await installed('before');
    const member = person(w, 'U0BEFOREMEMBER');
    const asked = many.bot.sandbox.requests.length;
    const { ack, reply } = await many.bot.command(w, member, '');
    expect(ack.status).toBe(200);
    expect(reply.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain('The payment account is not connected');
    expect(visibleText(reply)).toContain(`<@${w.installer}> (who installed the app)`);
    const invoice = await many.bot.command(w, member, DEMO_INVOICE_IDS.open, { command: '/invoice' });
    expect(visibleText(invoice.reply)).toContain('not connected');
    expect(many.bot.sandbox.requests).toHaveLength(asked);
  });

  it('shows the Connect button in the Home tab to the installer and admins, and only the state to members', async () => {
    const w = await installed('hometab');
    const admin = person(w, 'U0HOMETABBOSS', { is_admin: true });
    const member = person(w, 'U0HOMETABMEMBER');
    const installer = await many.bot.homeFor(w, w.installer);
    expect(installer).toContain('connect_payment_account');
    expect(installer).toContain('not connected');
    expect(await many.bot.homeFor(w, admin)).toContain('connect_payment_account');
    const plain = await many.bot.homeFor(w, member);
    expect(plain).not.toContain('connect_payment_account');
    expect(plain).toContain('not connected');
    // Published with the workspace's own token.
    expect(
      new Set(
        calls('views.publish')
          .filter((c) => c.args.user_id === member)
          .map((c) => c.token),
      ),
    ).toEqual(new Set([w.token]));
  });
});

describe('the Connect modal', () => {
  it('opens for the installer, an admin and an owner of the workspace, with the workspace’s token', async () => {
    const w = await installed('opens');
    const admin = person(w, 'U0OPENSBOSS', { is_admin: true });
    const owner = person(w, 'U0OPENSOWNER', { is_owner: true });
    for (const who of [w.installer, admin, owner]) {
      const before = many.bot.slack.modals.length;
      const ack = await many.bot.click(w, who, 'connect_payment_account');
      expect(ack.status).toBe(200);
      await expect.poll(() => modalsSince(before).length, { timeout: 3000 }).toBe(1);
      const [modal] = modalsSince(before);
      expect(modal?.token).toBe(w.token);
      expect(modal?.triggerId).toBe('1.2.connect_payment_account');
      expect(modal?.view).toMatchObject({
        callback_id: 'payment_account',
        title: { text: 'Connect payment account' },
      });
      expect(text(modal?.view)).toContain('"block_id":"api_key"');
    }
    // The installer is known without asking Slack's directory; the others are asked each time.
    expect(calls('users.info').map((c) => c.args.user)).toEqual(expect.arrayContaining([admin, owner]));
    expect(calls('users.info').map((c) => c.args.user)).not.toContain(w.installer);
  });

  it('is refused to a member, a guest, a deactivated admin, a bot, an admin of another workspace and someone Slack does not describe', async () => {
    const w = await installed('refuses');
    const elsewhere = workspace('elsewhere');
    const people = [
      person(w, 'U0REFUSESMEMBER'),
      person(w, 'U0REFUSESGUEST', { is_admin: true, is_restricted: true }),
      person(w, 'U0REFUSESSINGLE', { is_admin: true, is_ultra_restricted: true }),
      person(w, 'U0REFUSESGONE', { is_admin: true, deleted: true }),
      person(w, 'U0REFUSESBOT', { is_owner: true, is_bot: true }),
      person(elsewhere, 'U0ELSEWHEREADMIN', { is_admin: true }),
    ];
    const before = many.bot.slack.modals.length;
    const from = many.bot.logs.length;
    for (const who of people)
      expect((await many.bot.click(w, who, 'connect_payment_account')).status).toBe(200);
    many.bot.slack.answerNext('users.info', { ok: true });
    expect((await many.bot.click(w, 'U0REFUSESNOBODY', 'connect_payment_account')).status).toBe(200);
    await expect
      .poll(
        () =>
          many.bot.logs
            .slice(from)
            .filter((l) => l.msg === 'payment account button refused: not its manager or an admin'),
        { timeout: 3000 },
      )
      .toHaveLength(people.length + 1);
    expect(modalsSince(before)).toEqual([]);
    const refused = many.bot.logs.slice(from).filter((l) => String(l.msg).includes('refused'));
    expect(refused.map((l) => [l.level, l.installation, l.user])).toEqual(
      [...people, 'U0REFUSESNOBODY'].map((who) => ['warn', w.team, who]),
    );
  });

  it('tells someone refused who can connect it, privately, when the click came with a response_url', async () => {
    const w = await installed('tells');
    const member = person(w, 'U0TELLSMEMBER');
    const responseUrl = many.bot.slack.responseUrl();
    await many.bot.click(w, member, 'connect_payment_account', { responseUrl });
    const told = await many.bot.slack.waitForPost(responseUrl, 3000);
    expect(told.body).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(visibleText(told.body)).toContain(
      `Only the person who installed the app (<@${w.installer}>) or a workspace admin or owner`,
    );
  });

  it('opens for an organisation admin of an organisation-wide install, not for a workspace admin of it', async () => {
    const org: Workspace = { ...workspace('grid'), team: installationId('E0GRID') };
    const page = await many.bot.install(org, {
      team: null,
      enterprise: { id: 'E0GRID', name: 'Grid' },
      is_enterprise_install: true,
    });
    expect(page.status).toBe(200);
    many.bot.slack.people.set('U0GRIDORGADMIN', {
      team_id: 'T0GRIDWS',
      enterprise_user: { enterprise_id: 'E0GRID', is_admin: true },
    });
    many.bot.slack.people.set('U0GRIDORGOWNER', {
      team_id: 'T0GRIDWS',
      enterprise_user: { enterprise_id: 'E0GRID', is_owner: true },
    });
    many.bot.slack.people.set('U0GRIDWSADMIN', {
      team_id: 'T0GRIDWS',
      is_admin: true,
      enterprise_user: { enterprise_id: 'E0GRID' },
    });
    const clickIn = (user: string) =>
      many.bot.post(
        `payload=${encodeURIComponent(
          JSON.stringify({
            type: 'block_actions',
            team: { id: 'T0GRIDWS', domain: 'gridws', enterprise_id: 'E0GRID' },
            enterprise: { id: 'E0GRID', name: 'Grid' },
            is_enterprise_install: true,
            user: { id: user, team_id: 'T0GRIDWS' },
            api_app_id: 'A0APP',
            token: 'deprecated-verification-token',
            trigger_id: `1.2.${user}`,
            container: { type: 'view', view_id: 'V0HOME' },
            view: { id: 'V0HOME', type: 'home', team_id: 'T0GRIDWS' },
            actions: [
              {
                type: 'button',
                action_id: 'connect_payment_account',
                block_id: 'payment_account',
                action_ts: '1',
              },
            ],
          }),
        )}`,
      );
    const before = many.bot.slack.modals.length;
    for (const user of ['U0GRIDORGADMIN', 'U0GRIDORGOWNER', 'U0GRIDWSADMIN']) await clickIn(user);
    await expect.poll(() => modalsSince(before).length, { timeout: 3000 }).toBe(2);
    await many.bot.logged('payment account button refused: not its manager or an admin');
    expect(
      modalsSince(before)
        .map((m) => m.triggerId)
        .sort(),
    ).toEqual(['1.2.U0GRIDORGADMIN', '1.2.U0GRIDORGOWNER']);
    expect(modalsSince(before).map((m) => m.token)).toEqual([org.token, org.token]);
  });

  it('/balance connect opens it for the installer and tells a member who can', async () => {
    const w = await installed('command');
    const member = person(w, 'U0COMMANDMEMBER');
    const before = many.bot.slack.modals.length;
    const refused = await many.bot.command(w, member, 'connect');
    expect(refused.reply.response_type).toBe('ephemeral');
    expect(visibleText(refused.reply)).toContain(`Only the person who installed the app (<@${w.installer}>)`);
    const responseUrl = many.bot.slack.responseUrl();
    const opened = await many.bot.post(
      commandBody({
        command: '/balance',
        text: ' Connect ',
        response_url: responseUrl,
        team_id: w.team,
        user_id: w.installer,
      }),
    );
    // The modal is the answer: nothing is said in the channel.
    expect(opened.status).toBe(200);
    expect(opened.body).toBe('');
    await expect.poll(() => modalsSince(before).length, { timeout: 3000 }).toBe(1);
    expect(modalsSince(before)[0]?.token).toBe(w.token);
    expect(modalsSince(before)[0]?.view).toMatchObject({ callback_id: 'payment_account' });
    expect(many.bot.slack.posts.filter((p) => p.url === responseUrl)).toEqual([]);
  });
});
