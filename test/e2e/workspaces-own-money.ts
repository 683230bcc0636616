import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS, num } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import {
  blockActionsBody,
  commandBody,
  linkSharedBody,
  messageActionBody,
  postToBot,
} from '../support/slack-requests.js';
import { homeClickBody, inWorkspace } from '../support/workspace-requests.js';
import { askBot, SECRETS, startBot, until } from './harness.js';
import {
  balanceFrom,
  bot,
  database,
  homeFor,
  manyEnv,
  ONE_INVOICE,
  ONE_KEY,
  ONE_MONEY,
  oneInvoice,
  sandbox,
  slack,
  stored,
  submitKey,
  TWO_MONEY,
  WORKSPACES,
  type Workspace,
} from './workspaces-stack.js';

/** The many-workspaces scenario's heart: each workspace reads its own money, with its own key and token, in requests, feeds and watches. */

export function eachReadsItsOwnMoney(name: string): void {
  describe('many workspaces: each reads its own money', () => {
    const one = () => WORKSPACES.one;
    const two = () => WORKSPACES.two;
    /** Workspace two's merchant is the sandbox's own (its demo data); one's is another. */
    const theirs = (w: Workspace) => (w === one() ? ONE_MONEY : TWO_MONEY);
    const others = (w: Workspace) => (w === one() ? TWO_MONEY : ONE_MONEY);
    const invoiceOf = (w: Workspace) => (w === one() ? ONE_INVOICE : DEMO_INVOICE_IDS.open);
    const linkOf = (w: Workspace) => `${sandbox.payUrl}/pay/${invoiceOf(w)}`;

    const command = (w: Workspace, name: '/balance' | '/invoice', text: string) =>
      askBot(bot, slack, (response_url) =>
        commandBody({ command: name, text, response_url, team_id: w.team, user_id: w.installer }),
      );
    const click = (w: Workspace, invoiceId: string) =>
      askBot(bot, slack, (responseUrl) =>
        inWorkspace(
          blockActionsBody({
            actionId: 'refresh_invoice',
            value: invoiceId,
            responseUrl,
            user: w.installer,
            ephemeral: true,
          }),
          w,
        ),
      );
    const shortcut = (w: Workspace) =>
      askBot(bot, slack, (responseUrl) =>
        inWorkspace(
          messageActionBody({
            callbackId: 'check_payment',
            responseUrl,
            user: w.installer,
            message: { ts: '1700000000.000300', text: `${ONE_INVOICE} and ${DEMO_INVOICE_IDS.open}` },
          }),
          w,
        ),
      );
    const unfurl = (w: Workspace) =>
      postToBot(
        `${bot.url}/slack/events`,
        inWorkspace(linkSharedBody([linkOf(w)], { eventId: `Ev${w.team}${Math.random()}` }), w),
        SECRETS.signingSecret,
        { contentType: 'application/json' },
      );

    it('connects the second workspace’s own account', async () => {
      sandbox.addMerchant(ONE_KEY, {
        balances: [{ id: 'XMR', title: 'Monero', balance: num('77.7777') }],
        invoices: [oneInvoice(sandbox.payUrl)],
      });
      // Slack's directory knows each installer as a member of their own workspace.
      for (const w of [one(), two()]) slack.people.set(w.installer, { team_id: w.team, is_admin: true });
      const response = await submitKey(one(), one().installer, ONE_KEY);
      expect(response.status).toBe(200);
      expect(response.body).toBe('');
      expect(await stored()).not.toContain(ONE_KEY);
    });

    it('answers interleaved commands, clicks, shortcuts, unfurls and Home tabs with each workspace’s own money, token and key', async () => {
      const asked = sandbox.requests.length;
      const calls = slack.calls.length;
      const rounds = [one(), two(), two(), one(), one(), two()];
      const replies = await Promise.all(
        rounds.flatMap((w) => [
          command(w, '/balance', '').then((r) => ({ w, what: 'balance', r: JSON.stringify(r.reply) })),
          command(w, '/invoice', invoiceOf(w)).then((r) => ({
            w,
            what: 'invoice',
            r: JSON.stringify(r.reply),
          })),
          command(w, '/invoice', invoiceOf(w === one() ? two() : one())).then((r) => ({
            w,
            what: 'the other’s invoice',
            r: JSON.stringify(r.reply),
          })),
          click(w, invoiceOf(w)).then((r) => ({ w, what: 'refresh', r: JSON.stringify(r.reply) })),
          shortcut(w).then((r) => ({ w, what: 'shortcut', r: JSON.stringify(r.reply) })),
        ]),
      );
      await Promise.all([unfurl(one()), unfurl(two())]);
      const homes = {
        one: await homeFor(one(), one().installer),
        two: await homeFor(two(), two().installer),
      };
      await until(() => slack.calls.filter((c) => c.method === 'chat.unfurl').length >= 2, 'both unfurls');

      for (const { w, what, r } of replies) {
        for (const mark of others(w)) expect(r, `${what} in ${w.team}`).not.toContain(mark);
        if (what === 'the other’s invoice') expect(r).toContain('Invoice not found');
        else if (what !== 'shortcut')
          expect(r, `${what} in ${w.team}`).toContain(theirs(w)[what === 'balance' ? 0 : 1]);
      }
      for (const [w, home] of [
        [one(), homes.one],
        [two(), homes.two],
      ] as const) {
        expect(home, home).toContain(theirs(w)[0]);
        for (const mark of others(w)) expect(home).not.toContain(mark);
        expect(home).toContain('Payment account');
      }
      const unfurls = slack.calls.slice(calls).filter((c) => c.method === 'chat.unfurl');
      for (const w of [one(), two()]) {
        const own = unfurls.filter((c) => c.token === w.token);
        expect(own).toHaveLength(1);
        expect(JSON.stringify(own[0]?.args)).toContain(theirs(w)[1]);
        for (const mark of others(w)) expect(JSON.stringify(own[0]?.args)).not.toContain(mark);
      }
      // Every Web API call was made with a token of the workspace it was about, and no other.
      const tokens = new Set(slack.calls.slice(calls).map((c) => c.token));
      expect([...tokens].sort()).toEqual([one().token, two().token].sort());
      // Every service call carried one of the two keys, and each invoice was asked with its own merchant's key
      // except when the other workspace asked for it (and was told it does not exist).
      const made = sandbox.requests.slice(asked);
      expect(new Set(made.map((q) => q.authorization))).toEqual(
        new Set([`Token ${ONE_KEY}`, `Token ${sandbox.apiKey}`]),
      );
      expect(slack.problems).toEqual([]);
    });

    it('runs each workspace’s payments feed in the same channel id, read with its key and posted with its token', async () => {
      const finance = 'G0FINANCE';
      slack.conversations.set(finance, { id: finance, is_private: true });
      const asked = sandbox.requests.length;
      const subscribe = (w: Workspace) =>
        askBot(bot, slack, (response_url) =>
          commandBody({
            command: '/balance',
            text: 'subscribe',
            response_url,
            team_id: w.team,
            user_id: w.installer,
            channel_id: finance,
          }),
        );
      const [a, b] = await Promise.all([subscribe(one()), subscribe(two())]);
      for (const r of [a, b])
        expect(JSON.stringify(r.reply)).toContain('the payments feed is on in this channel');
      const postsBy = (w: Workspace) =>
        slack.calls.filter(
          (c) => c.method === 'chat.postMessage' && c.args.channel === finance && c.token === w.token,
        );
      expect(postsBy(one())).toHaveLength(1);
      expect(postsBy(two())).toHaveLength(1);

      // Each merchant is paid: each workspace hears of its own payment only, exactly.
      sandbox.addMerchant(ONE_KEY, {
        balances: [{ id: 'XMR', title: 'Monero', balance: num('78.0001') }],
        invoices: [oneInvoice(sandbox.payUrl)],
      });
      sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('0.5') }]);
      await until(
        () => postsBy(one()).length === 2 && postsBy(two()).length === 2,
        'a feed post in each workspace',
        10_000,
      ).catch((e) => {
        console.log(
          bot.output
            .filter((l) => /feed|outbox|error|warn/i.test(l))
            .slice(-30)
            .join('\n'),
        );
        throw e;
      });
      const oneNews = JSON.stringify(postsBy(one())[1]?.args);
      const twoNews = JSON.stringify(postsBy(two())[1]?.args);
      expect(oneNews).toContain('received *+0.2224* XMR');
      expect(twoNews).toContain('balance 0.5 BTC');
      for (const mark of ['Bitcoin', 'BTC']) expect(oneNews).not.toContain(mark);
      for (const mark of ['Monero', 'XMR']) expect(twoNews).not.toContain(mark);
      const reads = sandbox.requests.slice(asked).filter((q) => q.path === '/api/v2/balance');
      expect(new Set(reads.map((q) => q.authorization))).toEqual(
        new Set([`Token ${ONE_KEY}`, `Token ${sandbox.apiKey}`]),
      );
      // Nothing more once nothing moves; each lists its own feed.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(postsBy(one())).toHaveLength(2);
      expect(postsBy(two())).toHaveLength(2);
      expect(slack.problems).toEqual([]);
    });

    it('watches the same invoice id in two workspaces as two watches, each checked with its key and told with its token', async () => {
      const shared = 'C0SHARED';
      // Workspace one's merchant happens to have an invoice of the same id as workspace two's.
      sandbox.addMerchant(ONE_KEY, {
        balances: [{ id: 'XMR', title: 'Monero', balance: num('77.7777') }],
        invoices: [oneInvoice(sandbox.payUrl), { ...oneInvoice(sandbox.payUrl), id: DEMO_INVOICE_IDS.open }],
      });
      const watch = (w: Workspace) =>
        askBot(bot, slack, (response_url) =>
          commandBody({
            command: '/invoice',
            text: `watch ${DEMO_INVOICE_IDS.open}`,
            response_url,
            team_id: w.team,
            user_id: w.installer,
            channel_id: shared,
          }),
        );
      const [one_, two_] = await Promise.all([watch(one()), watch(two())]);
      for (const r of [one_, two_]) expect(JSON.stringify(r.reply)).not.toContain('warning');
      const cards = slack.calls.filter((c) => c.method === 'chat.postMessage' && c.args.channel === shared);
      expect(cards.map((c) => c.token).sort()).toEqual([one().token, two().token].sort());
      const cardOf = (w: Workspace) => {
        const call = cards.find((c) => c.token === w.token);
        return slack.messages.find((m) => m.channel === shared && m.text === call?.args.text && !m.threadTs);
      };
      expect(JSON.stringify(cardOf(one())?.blocks)).toContain('One Coffee Roasters');
      expect(JSON.stringify(cardOf(two())?.blocks)).toContain('Acme Hardware Store');

      // Workspace two's merchant is paid; workspace one's invoice of the same id is not.
      sandbox.updateInvoice(DEMO_INVOICE_IDS.open, { payStatus: 'paid', status: 'paid' });
      const twoCard = cardOf(two());
      // Paid is final: workspace two's thread hears of it and, in the same reply, that its watch has ended.
      await until(
        () => slack.repliesIn(shared, twoCard?.ts ?? '').length >= 1,
        'the paid notice and the end in workspace two’s thread',
        20_000,
      );
      expect(slack.repliesIn(shared, twoCard?.ts ?? '').map((m) => visibleText(m))).toEqual([
        expect.stringMatching(/• \*Payment\*: Not paid → Paid\n[^\n]*no longer awaits payment/),
      ]);
      const told = slack.calls.filter(
        (c) => c.method === 'chat.postMessage' && c.args.thread_ts === twoCard?.ts,
      );
      expect(new Set(told.map((c) => c.token))).toEqual(new Set([two().token]));
      expect(slack.repliesIn(shared, cardOf(one())?.ts ?? '')).toEqual([]);
      const checks = sandbox.requests.filter((q) => q.path === `/api/v2/invoice/${DEMO_INVOICE_IDS.open}`);
      expect(new Set(checks.map((q) => q.authorization))).toEqual(
        new Set([`Token ${ONE_KEY}`, `Token ${sandbox.apiKey}`]),
      );
    });
    it('replaces a key: no instance reads with the old one after, and the feed tells no gap between accounts as money', async () => {
      const finance = 'G0FINANCE';
      const third = 'merchant-three-e2e-key-4e5f6a7b8c';
      sandbox.addMerchant(third, {
        balances: [{ id: 'ETH', title: 'Ethereum', balance: num('42') }],
        invoices: [],
      });
      // PostgreSQL: a second instance serves the same workspaces' background work meanwhile.
      const second = name === 'PostgreSQL' ? await startBot(manyEnv(database)) : undefined;
      try {
        await new Promise((resolve) => setTimeout(resolve, 2500));
        const posted = slack.calls.length;
        const replaced = await submitKey(two(), 'U0TWOBOSS', third);
        expect(replaced.status).toBe(200);
        const committed = Date.now();
        await until(
          () => sandbox.requests.some((q) => q.at > committed && q.authorization === `Token ${third}`),
          'a reading with the new key',
        );
        await new Promise((resolve) => setTimeout(resolve, 3000));
        const oldKeyAfter = sandbox.requests.filter(
          (q) => q.at > committed && q.authorization === `Token ${sandbox.apiKey}`,
        );
        expect(oldKeyAfter).toEqual([]);
        const feedPosts = slack.calls
          .slice(posted)
          .filter((c) => c.args.channel === finance && c.token === two().token)
          .map((c) => JSON.stringify(c.args));
        expect(feedPosts.join('\n')).not.toMatch(/withdrawn|received|Bitcoin|Ethereum/);
      } finally {
        await second?.stop();
        expect((await submitKey(two(), 'U0TWOBOSS', sandbox.apiKey)).status).toBe(200);
      }
    });
    it('ends a workspace’s watches when its payment account is disconnected, each thread told why', async () => {
      const shared = 'C0SHARED';
      const card = slack.messages.find(
        (m) =>
          m.channel === shared && !m.threadTs && JSON.stringify(m.blocks).includes('One Coffee Roasters'),
      );
      if (!card) throw new Error('workspace one’s live card');
      const before = slack.repliesIn(shared, card.ts).length;
      const response = await postToBot(
        `${bot.url}/slack/events`,
        homeClickBody(one(), one().installer, 'disconnect_payment_account'),
        SECRETS.signingSecret,
      );
      expect(response.status).toBe(200);
      await until(
        () => slack.repliesIn(shared, card.ts).length > before,
        'the end in workspace one’s thread',
      );
      expect(visibleText(slack.repliesIn(shared, card.ts).at(-1))).toContain(
        'the workspace’s payment account was disconnected, so the bot can no longer read the invoice',
      );
      const shown = card.edits.at(-1);
      expect(JSON.stringify(shown?.blocks)).toContain('payment account was disconnected');
      expect(JSON.stringify(shown?.blocks)).not.toContain('stop_watch');
      expect(JSON.stringify((await balanceFrom(one())).reply)).toContain('not connected');
      // Connected again and watching again, for what follows.
      expect((await submitKey(one(), one().installer, ONE_KEY)).status).toBe(200);
      const again = await askBot(bot, slack, (response_url) =>
        commandBody({
          command: '/invoice',
          text: `watch ${DEMO_INVOICE_IDS.open}`,
          response_url,
          team_id: one().team,
          user_id: one().installer,
          channel_id: shared,
        }),
      );
      expect(JSON.stringify(again.reply)).not.toContain('warning');
    });
  });
}
