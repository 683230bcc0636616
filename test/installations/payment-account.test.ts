import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS, num } from '../../src/sandbox/data.js';
import { installationId } from '../../src/store/keys.js';
import { visibleText } from '../support/block-kit.js';
import { commandBody } from '../support/slack-requests.js';
import { useWorkspacesBot, type Workspace, workspace } from '../support/workspaces-bot.js';

/**
 * The payment account of a workspace of many, in the bot assembled as src/main.ts does: the
 * Home tab's Connect and Disconnect, `/balance connect`, the modal that takes the key, who may do
 * any of it (users.info, asked each time), and what people see before and after.
 */

const many = useWorkspacesBot();

/** A merchant of the sandbox with its own key and money, which no other key reads. */
let merchants = 0;
function merchant(currency = 'Monero'): string {
  merchants += 1;
  const key = `merchant-${merchants}-unit-key-${currency.toLowerCase()}-7d6c5b4a`;
  many.bot.sandbox.addMerchant(key, {
    balances: [{ id: currency.slice(0, 3).toUpperCase(), title: currency, balance: num('77.7777') }],
    invoices: [],
  });
  return key;
}

/** Installs a fresh workspace; its installer is a plain member of it in Slack's directory. */
async function installed(name: string): Promise<Workspace> {
  const w = workspace(name);
  many.bot.slack.people.set(w.installer, { team_id: w.team });
  const page = await many.bot.install(w);
  expect(page.status).toBe(200);
  return w;
}

/** Someone of workspace `w` as users.info describes them. */
function person(w: Workspace, id: string, fields: Record<string, unknown> = {}): string {
  many.bot.slack.people.set(id, { team_id: w.team, ...fields });
  return id;
}

const text = (value: unknown) => JSON.stringify(value);
const modalsSince = (n: number) => many.bot.slack.modals.slice(n);
const calls = (method: string, from = 0) =>
  many.bot.slack.calls.slice(from).filter((c) => c.method === method);

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

describe('submitting a key', () => {
  it('refuses a key the service rejects, in the modal, with the reason, and keeps nothing', async () => {
    const w = await installed('rejected');
    const response = await many.bot.submitKey(w, w.installer, 'not-the-merchants-key-0000');
    expect(response.status).toBe(200);
    expect(response.json()).toEqual({
      response_action: 'errors',
      errors: { api_key: expect.stringContaining('The payment service rejected this key') },
    });
    expect(many.bot.sandbox.requests.at(-1)).toMatchObject({
      path: '/api/v2/balance',
      authorization: 'Token not-the-merchants-key-0000',
    });
    expect(await many.bot.installations.paymentKeyOf(w.team)).toBeUndefined();
    expect((await many.bot.installations.summaryOf(w.team))?.account).toBeUndefined();
    expect(visibleText((await many.bot.command(w, w.installer, '')).reply)).toContain('not connected');
  });

  it('says when the key could not be checked, within Slack’s 3 s, and keeps nothing', async () => {
    const w = await installed('unchecked');
    const key = merchant();
    // A captive portal answers instead of the service.
    many.bot.sandbox.failNext({ kind: 'html' });
    const response = await many.bot
      .submitKey(w, w.installer, key)
      .finally(() => many.bot.sandbox.clearFaults());
    expect(response.ms).toBeLessThan(3000);
    const { errors } = response.json() as { errors: { api_key: string } };
    expect(errors.api_key).toMatch(
      /^The key could not be checked: .+\. Nothing was saved; try again in a minute\.$/,
    );
    expect(errors.api_key).toContain('The payment service sent an answer the bot could not read.');
    expect(await many.bot.installations.paymentKeyOf(w.team)).toBeUndefined();
  });

  it('refuses a submission without a key as a rejected key, and keeps nothing', async () => {
    const w = await installed('empty');
    for (const key of [null, '   ']) {
      const response = await many.bot.submitKey(w, w.installer, key);
      expect(response.json()).toEqual({
        response_action: 'errors',
        errors: { api_key: expect.stringContaining('The payment service rejected this key') },
      });
    }
    expect(await many.bot.installations.paymentKeyOf(w.team)).toBeUndefined();
  });

  it('refuses a key submitted by a member, asking the service nothing, and says so in the log', async () => {
    const w = await installed('member');
    const member = person(w, 'U0MEMBERMEMBER');
    const asked = many.bot.sandbox.requests.length;
    const from = many.bot.logs.length;
    const response = await many.bot.submitKey(w, member, merchant());
    expect(response.json()).toEqual({
      response_action: 'errors',
      errors: {
        api_key:
          'Only the person who connected the payment account (before that, who installed the app) or a workspace admin or owner can change it.',
      },
    });
    expect(many.bot.sandbox.requests).toHaveLength(asked);
    expect(await many.bot.installations.paymentKeyOf(w.team)).toBeUndefined();
    expect(await many.bot.logged('payment key refused: not its manager or an admin', from)).toMatchObject({
      level: 'warn',
      installation: w.team,
      user: member,
    });
  });

  it('keeps a good key sealed, republishes the Home tab with the balance, and answers /balance with it', async () => {
    const w = await installed('good');
    const admin = person(w, 'U0GOODBOSS', { is_admin: true });
    const key = merchant('Monero');
    const homes = many.bot.slack.homeViews.length;
    const from = many.bot.logs.length;
    const response = await many.bot.submitKey(w, admin, `  ${key}\n`);
    expect(response.status).toBe(200);
    expect(response.body).toBe('');
    // Trimmed, sealed, opened again with the bot's key; who connected it and when.
    expect(await many.bot.installations.paymentKeyOf(w.team)).toBe(key);
    const summary = await many.bot.installations.summaryOf(w.team);
    expect(summary?.account?.connectedBy).toBe(admin);
    expect(Math.abs((summary?.account?.connectedAt ?? 0) - Date.now())).toBeLessThan(5000);
    expect(many.bot.stored()).toContain(w.team);
    expect(many.bot.stored()).not.toContain(key);
    expect(await many.bot.logged('payment account connected', from)).toMatchObject({
      level: 'info',
      installation: w.team,
      by: admin,
    });

    await expect
      .poll(() => many.bot.slack.homeViews.slice(homes).map((h) => h.userId), { timeout: 3000 })
      .toEqual([admin]);
    const home = text(many.bot.slack.homeViews.at(-1)?.view);
    expect(home).toContain(`Connected by <@${admin}>`);
    expect(home).toContain('disconnect_payment_account');
    expect(home).toContain('Monero');
    expect(home).not.toContain(key);
    expect(calls('views.publish').at(-1)?.token).toBe(w.token);

    const { reply } = await many.bot.command(w, w.installer, '');
    expect(visibleText(reply)).toContain('77.7777');
    expect(many.bot.sandbox.requests.at(-1)?.authorization).toBe(`Token ${key}`);
    // Replacing it: the modal says so; the one who connected it manages it now, not the installer alone.
    const before = many.bot.slack.modals.length;
    await many.bot.click(w, admin, 'connect_payment_account');
    await expect.poll(() => modalsSince(before).length, { timeout: 3000 }).toBe(1);
    expect(modalsSince(before)[0]?.view).toMatchObject({ title: { text: 'Replace the API key' } });
    const refused = await many.bot.command(w, person(w, 'U0GOODMEMBER'), 'connect');
    expect(visibleText(refused.reply)).toContain(`Only the person who connected it (<@${admin}>)`);
    // The installer, a plain member, manages it no more.
    const installer = await many.bot.command(w, w.installer, 'connect');
    expect(visibleText(installer.reply)).toContain(`Only the person who connected it (<@${admin}>)`);
    expect(await many.bot.homeFor(w, w.installer)).not.toContain('disconnect_payment_account');
    expect(many.bot.rawLogs).not.toContain(key);
  });
});

describe('disconnecting', () => {
  it('is refused to a member: the account stays connected', async () => {
    const w = await installed('kept');
    const key = merchant();
    expect((await many.bot.submitKey(w, w.installer, key)).body).toBe('');
    const member = person(w, 'U0KEPTMEMBER');
    const from = many.bot.logs.length;
    await many.bot.click(w, member, 'disconnect_payment_account');
    expect(
      await many.bot.logged('payment account disconnect refused: not its manager or an admin', from),
    ).toMatchObject({
      level: 'warn',
      installation: w.team,
      user: member,
    });
    expect(await many.bot.installations.paymentKeyOf(w.team)).toBe(key);
    expect(visibleText((await many.bot.command(w, w.installer, '')).reply)).toContain('77.7777');
  });

  it('forgets the key, ends the live watches with a word in each thread, and republishes the Home tab', async () => {
    const w = await installed('ends');
    const key = merchant();
    many.bot.sandbox.addMerchant(key, {
      balances: [{ id: 'XMR', title: 'Monero', balance: num('1') }],
      invoices: many.bot.sandbox.invoices.filter((i) => i.id === DEMO_INVOICE_IDS.open),
    });
    expect((await many.bot.submitKey(w, w.installer, key)).body).toBe('');
    const channel = 'C0ENDS';
    const watched = await many.bot.command(w, w.installer, `watch ${DEMO_INVOICE_IDS.open}`, {
      command: '/invoice',
      channel,
    });
    expect(text(watched.reply)).not.toContain('warning');
    const card = await expect
      .poll(() => many.bot.slack.repliesIn(channel)[0], { timeout: 3000 })
      .toBeDefined()
      .then(() => many.bot.slack.repliesIn(channel)[0]);
    if (!card) throw new Error('no live card');
    const homes = many.bot.slack.homeViews.length;
    const from = many.bot.logs.length;

    expect((await many.bot.click(w, w.installer, 'disconnect_payment_account')).status).toBe(200);
    expect(await many.bot.logged('payment account disconnected', from)).toMatchObject({
      level: 'info',
      installation: w.team,
      by: w.installer,
      watchesEnded: 1,
    });
    expect(await many.bot.installations.paymentKeyOf(w.team)).toBeUndefined();
    expect((await many.bot.installations.summaryOf(w.team))?.account).toBeUndefined();
    await expect.poll(() => many.bot.slack.repliesIn(channel, card.ts).length, { timeout: 3000 }).toBe(1);
    expect(visibleText(many.bot.slack.repliesIn(channel, card.ts)[0])).toContain(
      'the workspace’s payment account was disconnected, so the bot can no longer read the invoice',
    );
    await expect.poll(() => card.edits.length, { timeout: 3000 }).toBeGreaterThan(0);
    expect(text(card.edits.at(-1)?.blocks)).toContain('payment account was disconnected');
    const ended = await many.bot.store.db
      .selectFrom('watches')
      .selectAll()
      .where('installation_id', '=', w.team)
      .execute();
    expect(ended.map((row) => [row.state, row.end_reason])).toEqual([['ended', 'account_disconnected']]);

    await expect
      .poll(() => many.bot.slack.homeViews.slice(homes).map((h) => h.userId), { timeout: 3000 })
      .toEqual([w.installer]);
    const home = text(many.bot.slack.homeViews.at(-1)?.view);
    expect(home).toContain('not connected');
    expect(home).toContain('connect_payment_account');
    expect(home).not.toContain('disconnect_payment_account');
    expect(visibleText((await many.bot.command(w, w.installer, '')).reply)).toContain('not connected');
  });
});
