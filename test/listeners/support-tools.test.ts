import type { BlockAction, ButtonAction } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { createShareInvoiceAction } from '../../src/listeners/actions/share-invoice.js';
import { createAppHomeOpened } from '../../src/listeners/events/app-home-opened.js';
import { createGetInvoiceStep } from '../../src/listeners/functions/get-invoice.js';
import type { HomeClient } from '../../src/listeners/home.js';
import { createCheckPaymentShortcut } from '../../src/listeners/shortcuts/check-payment.js';
import { enqueue } from '../../src/outbox.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { serviceState } from '../../src/service-state.js';
import { ONE_WORKSPACE } from '../../src/store/keys.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { buttonArgs, captureLogs, HOME_TEAM } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { shortcutArgs, stepArgs } from '../support/tool-args.js';
import { useSandbox } from '../support/use-sandbox.js';

const env = useSandbox();
const { open: OPEN, paid: PAID } = DEMO_INVOICE_IDS;

describe('the Check payment status shortcut', () => {
  it('answers privately with a card per invoice found: two links and a typo give two cards', async () => {
    const { args, acks } = shortcutArgs({
      ts: '1700000000.000500',
      text: `paid? <${env.sandbox.payUrl}/pay/${OPEN}> and ${env.sandbox.payUrl}/pay/${PAID}, not ${OPEN.slice(0, 30)}`,
    });
    const responses: unknown[] = [];
    const deps = {
      ...env.deps(),
      responseUrls: { post: async (_url: string, message: unknown) => void responses.push(message) },
    };
    expect(await createCheckPaymentShortcut(deps)(args)).toMatchObject({
      outcome: 'ok',
      invoiceId: `${OPEN},${PAID}`,
      delivery: 'response_url',
      counts: { invoices: 2 },
    });
    expect(acks()).toBe(1);
    expect(env.sandbox.requests.map((r) => r.path).sort()).toEqual(
      [`/api/v2/invoice/${OPEN}`, `/api/v2/invoice/${PAID}`].sort(),
    );
    const [answer] = responses;
    expectValidMessage(answer);
    expect(answer).toMatchObject({ response_type: 'ephemeral' });
    const text = visibleText(answer);
    expect(text).toContain('*Order #1042 — annual support plan*\nOpen · Not paid · 149.99 USDT');
    expect(text).toContain('*Order #1041 — hardware wallet*');
    const json = JSON.stringify(answer);
    expect(json).toContain(
      `"action_id":"share_invoice:0","text":{"type":"plain_text","text":"Share in thread","emoji":true},"value":"${OPEN} 1700000000.000500"`,
    );
    // The paid invoice can start no watch: its card offers Share in thread alone.
    expect(json).toContain('"action_id":"watch_invoice:0"');
    expect(json).not.toContain('"action_id":"watch_invoice:1"');
  });

  it('uses the thread a message sits in', async () => {
    const { args } = shortcutArgs({ ts: '1700000000.000900', thread_ts: '1700000000.000100', text: OPEN });
    const responses: unknown[] = [];
    const deps = {
      ...env.deps(),
      responseUrls: { post: async (_url: string, message: unknown) => void responses.push(message) },
    };
    await createCheckPaymentShortcut(deps)(args);
    expect(JSON.stringify(responses[0])).toContain(`${OPEN} 1700000000.000100`);
  });

  it('shows an error on its own card, not as one failure', async () => {
    const missing = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
    const { args } = shortcutArgs({ ts: '1700000000.000500', text: `${OPEN} ${missing}` });
    const responses: unknown[] = [];
    const deps = {
      ...env.deps(),
      responseUrls: { post: async (_url: string, message: unknown) => void responses.push(message) },
    };
    await createCheckPaymentShortcut(deps)(args);
    expectValidMessage(responses[0]);
    expect(visibleText(responses[0])).toContain(`:warning: \`${missing}\`: Invoice not found.`);
    expect(visibleText(responses[0])).toContain('Order #1042');
  });

  it('says what it looks for when the message holds no invoice, calling nothing', async () => {
    const { args } = shortcutArgs({ ts: '1700000000.000500', text: 'where is my money?' });
    const responses: unknown[] = [];
    const deps = {
      ...env.deps(),
      responseUrls: { post: async (_url: string, message: unknown) => void responses.push(message) },
    };
    expect(await createCheckPaymentShortcut(deps)(args)).toMatchObject({ outcome: 'no_invoice' });
    expect(visibleText(responses[0])).toContain('I found no invoice in that message');
    expect(env.sandbox.requests).toHaveLength(0);
  });
});

describe('Share in thread', () => {
  it('posts the full card in the message’s thread, saying who shared it, and tells only the clicker', async () => {
    const { args, rec } = buttonArgs(`${OPEN} 1700000000.000500`, { actionId: 'share_invoice:0' });
    Object.assign(args.body as BlockAction<ButtonAction>, {
      container: { type: 'message', is_ephemeral: true, channel_id: 'C0SUPPORT' },
    });
    expect(await createShareInvoiceAction(env.deps())(args)).toMatchObject({
      outcome: 'ok',
      invoiceId: OPEN,
    });
    expect(env.poster.calls).toEqual(['post C0SUPPORT thread 1700000000.000500']);
    expect(visibleText(env.poster.messages[0])).toMatch(/shared <!date\^\d+\^[^>]+> by <@U0CLICKER>/);
    // Only the clicker sees the answer, which the click replaces (test/listeners/share-once.test.ts).
    expect(rec.responses[0]).toMatchObject({ response_type: 'ephemeral', replace_original: true });
    expect(visibleText(rec.responses[0])).toContain('Shared *Order #1042 — annual support plan*');
  });

  it('asks to invite the bot where it cannot post', async () => {
    env.poster.closedChannels.add('C0SUPPORT');
    const { args, rec } = buttonArgs(`${OPEN} 1700000000.000500`, { actionId: 'share_invoice:0' });
    expect(await createShareInvoiceAction(env.deps())(args)).toMatchObject({ outcome: 'not_in_channel' });
    expect(visibleText(rec.responses[0])).toContain('Invite me first');
  });
});

describe('the App Home', () => {
  const open = async (user: string, opts: Parameters<typeof env.deps>[0] = {}) => {
    const published: { user_id: string; view: { type: string; blocks: unknown[] } }[] = [];
    const client: HomeClient = { views: { publish: async (a) => void published.push(a as never) } };
    const event = { type: 'app_home_opened', user, channel: 'D0HOME', tab: 'home', event_ts: '1.2' } as never;
    const result = await createAppHomeOpened(env.deps(opts))({
      event,
      body: { team_id: HOME_TEAM } as never,
      client,
    } as never);
    return { result, view: published[0] };
  };

  it('shows the balance to someone allowed, with their watches and the feeds', async () => {
    const { result, view } = await open('U0FINANCE', { policy: { allowedUsers: ['U0FINANCE'] } });
    expect(result).toMatchObject({ outcome: 'ok' });
    expect(view?.user_id).toBe('U0FINANCE');
    expect(view?.view.type).toBe('home');
    expectValidMessage({ text: 'home', blocks: view?.view.blocks });
    const text = visibleText({ blocks: view?.view.blocks });
    expect(text).toContain('*Bitcoin*\n0.0123456 BTC');
    expect(text).toContain('Payments feeds (0)');
    expect(text).toContain('Last good answer from the payment service');
  });

  it('tells someone else who decides, and shows no balance and no feeds', async () => {
    const { view } = await open('U0SOMEONE', { policy: { allowedUsers: ['U0FINANCE'] } });
    const text = visibleText({ blocks: view?.view.blocks });
    expect(text).toContain(
      'The balance is shown only to the people the bot’s admin allows (`BALANCE_ALLOWED_USERS`)',
    );
    expect(text).not.toContain('BTC');
    expect(text).not.toContain('Payments feeds');
    expect(env.sandbox.requests).toHaveLength(0);
  });

  it('ignores the Messages and About tabs', async () => {
    const published: unknown[] = [];
    const client: HomeClient = { views: { publish: async (a) => void published.push(a) } };
    const event = {
      type: 'app_home_opened',
      user: 'U0FINANCE',
      channel: 'D0HOME',
      tab: 'messages',
      event_ts: '1.2',
    };
    const result = await createAppHomeOpened(env.deps())({
      event,
      body: { team_id: HOME_TEAM },
      client,
    } as never);
    expect(result).toEqual({ outcome: 'ok', quiet: true });
    expect(published).toEqual([]);
    expect(env.sandbox.requests).toHaveLength(0);
  });

  it('counts the person’s watches, and says since when the key has been rejected', async () => {
    const deps = env.deps();
    await deps.watches.start({
      teamId: HOME_TEAM,
      channelId: 'C0SUPPORT',
      userId: 'U0FINANCE',
      invoiceId: OPEN,
    });
    const state = serviceState(env.store, captureLogs().logger, { installation: ONE_WORKSPACE });
    await state.markKeyRejected(Date.parse('2026-11-21T07:00:00Z'));
    try {
      const { result, view } = await open('U0FINANCE');
      expect(result).toEqual({ outcome: 'ok', counts: { watches: 1 } });
      expect(visibleText({ blocks: view?.view.blocks })).toContain('2026-11-21T07:00:00Z');
    } finally {
      await state.markKeyAccepted();
      await emptyWork(env.store);
    }
  });

  it('says how many of the bot’s messages wait for Slack, and since when', async () => {
    const message = {
      text: 'Paid',
      blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'Paid' } }],
    };
    const twoHoursAgo = Date.parse('2026-11-21T10:00:00Z');
    await env.store.transaction((trx) =>
      enqueue(
        trx,
        [
          { channel: 'C0SUPPORT', message },
          { channel: 'C0SALES', message },
        ],
        twoHoursAgo,
        ONE_WORKSPACE,
      ),
    );
    try {
      const { view } = await open('U0SOMEONE');
      expect(visibleText({ blocks: view?.view.blocks })).toContain(
        ':hourglass_flowing_sand: 2 messages to Slack are waiting, the oldest since <!date^1795255200^{date_short_pretty} at {time}|2026-11-21T10:00:00Z>',
      );
    } finally {
      await env.store.db.deleteFrom('outbox').execute();
    }
  });

  it('does not wait more than about 2 s for the balance', async () => {
    env.sandbox.failNext({ kind: 'hang' }, 1);
    const started = Date.now();
    const { result, view } = await open('U0FINANCE');
    expect(Date.now() - started).toBeLessThan(2900);
    expect(result).toMatchObject({ outcome: 'service_unavailable' });
    expect(visibleText({ blocks: view?.view.blocks })).toContain('The balance could not be read just now');
  });

  it('still publishes, saying so, when the service fails', async () => {
    env.sandbox.failNext({ kind: 'status', status: 503 }, 5);
    const { result, view } = await open('U0FINANCE');
    expect(result).toMatchObject({ outcome: 'service_unavailable' });
    expect(visibleText({ blocks: view?.view.blocks })).toContain(
      'The balance could not be read just now: The payment service is unavailable.',
    );
  });
});

describe('the Get invoice workflow step', () => {
  const run = async (invoice: unknown) => {
    const { args, completed, failed } = stepArgs(invoice);
    const result = await createGetInvoiceStep(env.deps())(args);
    return { result, completed, failed };
  };

  it('completes with the invoice’s facts, the amount as exact text', async () => {
    const { result, completed, failed } = await run(`${env.sandbox.payUrl}/pay/${OPEN}`);
    expect(result).toEqual({ outcome: 'ok', invoiceId: OPEN });
    expect(failed).toEqual([]);
    expect(completed).toEqual([
      {
        outputs: {
          status: 'open',
          pay_status: 'none',
          amount: '149.99',
          currency: 'USDT',
          title: 'Order #1042 — annual support plan',
          link: `${env.sandbox.payUrl}/pay/${OPEN}`,
          expires_at: expect.any(Number),
          shop: 'Acme Hardware Store',
        },
      },
    ]);
  });

  it.each([
    ['not an invoice', 'order 1042', '"order 1042" is not an invoice id or payment link', 'invalid_input'],
    [
      'an unknown invoice',
      'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee',
      'Invoice not found (invoice aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee)',
      'invoice_not_found',
    ],
    ['nothing', undefined, '"" is not an invoice id or payment link', 'invalid_input'],
  ])('fails with a one-line reason for %s', async (_label, input, error, outcome) => {
    const { result, completed, failed } = await run(input);
    expect(result).toMatchObject({ outcome });
    expect(completed).toEqual([]);
    expect(failed).toEqual([{ error }]);
  });

  it('reads a padded id, and gives the expiry in seconds since the epoch', async () => {
    const { completed } = await run(`  ${OPEN}  `);
    const invoice = env.sandbox.invoices.find((i) => i.id === OPEN);
    expect(completed).toEqual([
      {
        outputs: expect.objectContaining({
          expires_at: Math.floor(Date.parse(String(invoice?.timeout)) / 1000),
        }),
      },
    ]);
  });

  it('fails saying the service is down when it is', async () => {
    env.sandbox.failNext({ kind: 'status', status: 503 }, 5);
    const { failed } = await run(OPEN);
    expect(failed).toEqual([{ error: `The payment service is unavailable (invoice ${OPEN})` }]);
  });
});
