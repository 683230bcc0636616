import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS, demoInvoices, num, type WireInvoice } from '../../src/sandbox/data.js';
import { INSTALLATION_TABLES } from '../../src/store/installations.js';
import type { InstallationId } from '../../src/store/keys.js';
import { visibleText } from '../support/block-kit.js';
import { OAUTH, useWorkspacesBot, type Workspace, workspace } from '../support/workspaces-bot.js';

/**
 * Many workspaces, in the bot assembled as src/main.ts does (test/support/workspaces-bot.ts):
 * requests from workspaces it does not serve, the install's
 * lifecycle events, and each workspace's own money. The end-to-end suite runs the same scenarios
 * against the built bot in a child process (test/e2e/workspaces.test.ts).
 */

const many = useWorkspacesBot();

const dmsTo = (user: string) => many.bot.slack.messages.filter((m) => m.channel === user);
const linesFrom = (from: number) => many.bot.logs.slice(from);
const text = (value: unknown) => JSON.stringify(value);

describe('a workspace the bot does not serve', () => {
  it('is refused at authorization, logged as a warning naming it, never as an error, and nothing is sent', async () => {
    const from = many.bot.logs.length;
    const calls = many.bot.slack.calls.length;
    const responseUrl = many.bot.slack.responseUrl();
    const ack = await many.bot.post(
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
    const line = await many.bot.logged('a Slack request was not authorized', from);
    expect(line.level).toBe('warn');
    expect(text(line.err)).toContain('no installation for T0STRANGER');
    expect(linesFrom(from).filter((l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
    expect(many.bot.slack.calls.slice(calls)).toEqual([]);
    expect(many.bot.slack.posts.filter((p) => p.url === responseUrl)).toEqual([]);
  });
});

describe('the assembly', () => {
  it('says it started for many workspaces in HTTP mode, and answers the operator’s routes', async () => {
    expect(many.bot.logs.find((l) => l.msg === 'bot started')).toMatchObject({
      mode: 'http',
      tenancy: 'many',
      port: Number(new URL(many.bot.url).port),
    });
    expect((await fetch(`${many.bot.url}/healthz`)).status).toBe(200);
    const w = workspace('metered');
    await many.bot.install(w);
    await many.bot.command(w, w.installer, '');
    const metrics = await fetch(`${many.bot.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/slackbot_installation_requests_total\{installation="T0METERED"/);
  });
});

describe('uninstalling', () => {
  /** Installs `w` with a payment account, a watch and a feed, so that it owns rows in the store. */
  async function busy(w: Workspace, key: string) {
    many.bot.slack.people.set(w.installer, { team_id: w.team });
    await many.bot.install(w);
    many.bot.sandbox.addMerchant(key, {
      balances: [{ id: 'XMR', title: 'Monero', balance: num('1') }],
      invoices: many.bot.sandbox.invoices.filter((i) => i.id === DEMO_INVOICE_IDS.open),
    });
    expect((await many.bot.submitKey(w, w.installer, key)).body).toBe('');
    const channel = `G0${w.team}`;
    many.bot.slack.conversations.set(channel, { id: channel, is_private: true });
    const watch = await many.bot.command(w, w.installer, `watch ${DEMO_INVOICE_IDS.open}`, {
      command: '/invoice',
      channel,
    });
    expect(text(watch.reply)).not.toContain('warning');
    const feed = await many.bot.command(w, w.installer, 'subscribe', { channel });
    expect(text(feed.reply)).toContain('the payments feed is on in this channel');
  }
  const owned = async (id: InstallationId) => {
    const counts: Record<string, number> = {};
    for (const table of INSTALLATION_TABLES) {
      const rows = await many.bot.store.db
        .selectFrom(table)
        .select('installation_id')
        .where('installation_id', '=', id)
        .execute();
      if (rows.length > 0) counts[table] = rows.length;
    }
    return counts;
  };
  const refusedNow = async (w: Workspace) => {
    const from = many.bot.logs.length;
    const ack = await many.bot.post(
      new URLSearchParams({
        command: '/balance',
        text: '',
        response_url: many.bot.slack.responseUrl(),
        team_id: w.team,
        user_id: w.installer,
        api_app_id: 'A0APP',
      }).toString(),
    );
    expect(ack.body).toBe('');
    expect(text((await many.bot.logged('a Slack request was not authorized', from)).err)).toContain(
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

    let from = many.bot.logs.length;
    // Slack's event_time is in whole seconds: this second, rounded up, is after the install.
    const now = { eventTime: Math.ceil(Date.now() / 1000) };
    expect((await many.bot.event(gone, { type: 'app_uninstalled' }, now)).status).toBe(200);
    expect(await many.bot.logged('uninstalled: its tokens and payment key are deleted', from)).toMatchObject({
      level: 'info',
      installation: gone.team,
      deleted: true,
    });
    expect(await many.bot.installations.summaryOf(gone.team)).toBeUndefined();
    expect(await owned(gone.team)).toEqual({});
    from = many.bot.logs.length;
    expect((await many.bot.event(gone, { type: 'app_uninstalled' }, now)).status).toBe(200);
    expect(await many.bot.logged('uninstalled: nothing left to delete', from)).toMatchObject({
      installation: gone.team,
      deleted: false,
    });
    await refusedNow(gone);

    expect(await owned(stays.team)).toEqual(before);
    expect(visibleText((await many.bot.command(stays, stays.installer, '')).reply)).toContain('Monero');
  });

  it('a late app_uninstalled, from before the workspace installed again, deletes nothing of the new install', async () => {
    const w = workspace('late');
    const earlier = Math.floor(Date.now() / 1000) - 60;
    await many.bot.install(w);
    const from = many.bot.logs.length;
    await many.bot.event(w, { type: 'app_uninstalled' }, { eventTime: earlier });
    expect(await many.bot.logged('uninstalled: nothing left to delete', from)).toMatchObject({
      installation: w.team,
    });
    expect((await many.bot.installations.summaryOf(w.team))?.installerUserId).toBe(w.installer);
    expect(visibleText((await many.bot.command(w, w.installer, '')).reply)).toContain('not connected');
  });

  it('installed again by someone else after an uninstall, it names its new installer, nothing kept of the old one', async () => {
    const w = workspace('anew');
    await many.bot.install(w);
    expect(visibleText((await many.bot.command(w, 'U0ANEWMEMBER', '')).reply)).toContain(`<@${w.installer}>`);
    await many.bot.event(w, { type: 'app_uninstalled' }, { eventTime: Math.ceil(Date.now() / 1000) });
    await expect.poll(() => many.bot.installations.summaryOf(w.team), { timeout: 3000 }).toBeUndefined();
    // Slack gives the same bot token to the new install.
    await many.bot.install({ ...w, installer: 'U0ANEWSECOND', code: 'code-anew-second' });
    expect(visibleText(dmsTo('U0ANEWSECOND')[0])).toContain('Thanks for installing');
    const { reply } = await many.bot.command(w, 'U0ANEWMEMBER', '');
    expect(visibleText(reply)).toContain('<@U0ANEWSECOND> (who installed the app)');
    expect(visibleText(reply)).not.toContain(w.installer);
  });

  it('tokens_revoked forgets the bot token, keeps the account until app_uninstalled, and requests are refused', async () => {
    const w = workspace('revoked');
    await busy(w, 'merchant-revoked-unit-key-9c8d7e6f');
    const from = many.bot.logs.length;
    expect(
      (await many.bot.event(w, { type: 'tokens_revoked', tokens: { bot: [`U0BOT${w.team.slice(2)}`] } }))
        .status,
    ).toBe(200);
    expect(await many.bot.logged('bot token revoked: forgotten', from)).toMatchObject({
      level: 'info',
      installation: w.team,
    });
    const row = await many.bot.store.db
      .selectFrom('installations')
      .select(['bot_token', 'payment_api_key'])
      .where('id', '=', w.team)
      .executeTakeFirstOrThrow();
    expect(row.bot_token).toBeNull();
    expect(row.payment_api_key).not.toBeNull();
    expect((await many.bot.installations.summaryOf(w.team))?.account?.connectedBy).toBe(w.installer);
    await refusedNow(w);
    // Nothing more is sent with the revoked token, though its watch is still in the store.
    const calls = many.bot.slack.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(many.bot.slack.calls.slice(calls).filter((c) => c.token === w.token)).toEqual([]);
  });

  it('tokens_revoked of user tokens only leaves the bot token alone', async () => {
    const w = workspace('usertokens');
    await many.bot.install(w);
    const from = many.bot.logs.length;
    await many.bot.event(w, { type: 'tokens_revoked', tokens: { oauth: ['U0SOMEUSER'] } });
    await many.bot.event(w, { type: 'tokens_revoked', tokens: { bot: [] } });
    // Both handled: the log has each event's request line, and no token was forgotten.
    await expect
      .poll(() => linesFrom(from).filter((l) => l.name === 'tokens_revoked' && l.outcome === 'ok'), {
        timeout: 3000,
      })
      .toHaveLength(2);
    expect(linesFrom(from).filter((l) => l.msg === 'bot token revoked: forgotten')).toEqual([]);
    expect(visibleText((await many.bot.command(w, w.installer, '')).reply)).toContain('not connected');
  });
});

describe('each workspace reads its own money', () => {
  it('answers commands and Home tabs with its own key and token; the other’s invoice does not exist for it', async () => {
    const one = workspace('moneyone');
    const two = workspace('moneytwo');
    const oneKey = 'merchant-moneyone-unit-key-0a9b8c7d';
    const oneInvoiceId = 'a1a1a1a1-1111-4aaa-8bbb-0123456789ab';
    const oneInvoice: WireInvoice = {
      ...(demoInvoices(many.bot.sandbox.payUrl)[0] as WireInvoice),
      id: oneInvoiceId,
      title: 'Espresso machine service',
      link: `${many.bot.sandbox.payUrl}/pay/${oneInvoiceId}`,
      shop: { title: 'One Coffee Roasters', successUrl: null, failUrl: null },
    };
    many.bot.sandbox.addMerchant(oneKey, {
      balances: [{ id: 'XMR', title: 'Monero', balance: num('77.7777') }],
      invoices: [oneInvoice],
    });
    for (const w of [one, two]) {
      many.bot.slack.people.set(w.installer, { team_id: w.team });
      await many.bot.install(w);
    }
    expect((await many.bot.submitKey(one, one.installer, oneKey)).body).toBe('');
    expect((await many.bot.submitKey(two, two.installer, many.bot.sandbox.apiKey)).body).toBe('');
    const asked = many.bot.sandbox.requests.length;
    const calls = many.bot.slack.calls.length;

    const [oneBalance, twoBalance, oneOwn, twoOwn, oneOther, twoOther] = await Promise.all([
      many.bot.command(one, one.installer, ''),
      many.bot.command(two, two.installer, ''),
      many.bot.command(one, one.installer, oneInvoiceId, { command: '/invoice' }),
      many.bot.command(two, two.installer, DEMO_INVOICE_IDS.open, { command: '/invoice' }),
      many.bot.command(one, one.installer, DEMO_INVOICE_IDS.open, { command: '/invoice' }),
      many.bot.command(two, two.installer, oneInvoiceId, { command: '/invoice' }),
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

    const homes = {
      one: await many.bot.homeFor(one, one.installer),
      two: await many.bot.homeFor(two, two.installer),
    };
    expect(homes.one).toContain('Monero');
    expect(homes.one).not.toContain('Bitcoin');
    expect(homes.two).toContain('Bitcoin');
    expect(homes.two).not.toContain('Monero');

    // Each workspace's calls carried its own key, and its Home was published with its own token.
    expect(new Set(many.bot.sandbox.requests.slice(asked).map((q) => q.authorization))).toEqual(
      new Set([`Token ${oneKey}`, `Token ${many.bot.sandbox.apiKey}`]),
    );
    const publishes = many.bot.slack.calls.slice(calls).filter((c) => c.method === 'views.publish');
    expect([...new Set(publishes.map((c) => `${c.args.user_id} ${c.token}`))]).toEqual([
      `${one.installer} ${one.token}`,
      `${two.installer} ${two.token}`,
    ]);
  });

  it('never wrote a token, a payment key, the client secret or the encryption key to its log', () => {
    const raw = many.bot.rawLogs;
    expect(raw).toContain('installed');
    for (const secret of [
      OAUTH.clientSecret,
      OAUTH.stateSecret,
      many.bot.config.slack.signingSecret,
      many.bot.config.encryption.current.toString('base64'),
      many.bot.sandbox.apiKey,
      'merchant-moneyone-unit-key-0a9b8c7d',
      'merchant-gone-unit-key-1a2b3c4d',
      ...many.bot.slack.calls.flatMap((c) => (c.token ? [c.token] : [])),
    ])
      expect(raw).not.toContain(secret);
  });
});
