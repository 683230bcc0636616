import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS, num } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import {
  calls,
  installed,
  many,
  merchant,
  modalsSince,
  person,
  text,
  usePaymentAccountBot,
} from './payment-account-setup.js';

/** A workspace's payment account: submitting its key in the modal, and disconnecting it. */

usePaymentAccountBot();

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
