import type { MessageShortcut, SlackShortcutMiddlewareArgs } from '@slack/bolt';
import { beforeEach, describe, expect, it } from 'vitest';
import { createRefreshInvoiceAction } from '../../src/listeners/actions/refresh-invoice.js';
import { createInvoiceCommand } from '../../src/listeners/commands/invoice.js';
import { createLinkSharedEvent } from '../../src/listeners/events/link-shared.js';
import { createCheckPaymentShortcut } from '../../src/listeners/shortcuts/check-payment.js';
import { actionListener, commandListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import {
  buttonArgs,
  captureLogs,
  commandArgs,
  type DepsOptions,
  HOME_TEAM,
  linkSharedArgs,
} from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * Issue 30, point 4: a button is offered only where it can do something. Watch is left off an
 * invoice that no longer awaits payment, and off one past its expiry plus WATCH_GRACE_MINUTES,
 * on every surface that offers it: the card, Refresh, a pasted link, the shortcut's answer.
 */
const env = useSandbox();
const { open: OPEN, paid: PAID, expired: EXPIRED } = DEMO_INVOICE_IDS;
/** A month on: the open demo invoice's expiry and the grace have long passed. */
const MONTH_ON: DepsOptions = { clock: () => Date.now() + 30 * 24 * 3_600_000 };

beforeEach(async () => {
  await emptyWork(env.store);
});

/** The action ids of the buttons in a message, suffixes and all. */
const buttons = (message: unknown): string[] =>
  [...JSON.stringify(message).matchAll(/"action_id":"([^"]+)"/g)].map((m) => m[1] ?? '');

async function invoiceCommand(text: string, opts: DepsOptions = {}) {
  const logs = captureLogs();
  const deps = env.deps({ ...opts, logger: logs.logger });
  const { args, rec } = commandArgs({ command: '/invoice', text });
  await commandListener(deps, '/invoice', createInvoiceCommand(deps))(args);
  const reply = rec.acks[0] ?? rec.responses[0];
  expectValidMessage(reply);
  return { reply, outcome: logs.lines.find((l) => l.msg === 'command /invoice')?.outcome };
}

describe('the invoice card', () => {
  it.each<[string, string, DepsOptions, string[]]>([
    ['an open invoice', OPEN, {}, ['open_payment_page', 'refresh_invoice', 'watch_invoice']],
    ['a paid and closed one', PAID, {}, ['open_payment_page', 'refresh_invoice']],
    ['an expired one', EXPIRED, {}, ['open_payment_page', 'refresh_invoice']],
    ['an open one past its expiry and the grace', OPEN, MONTH_ON, ['open_payment_page', 'refresh_invoice']],
  ])('offers Watch only while a watch can see a change: %s', async (_label, id, opts, offered) => {
    expect(buttons((await invoiceCommand(id, opts)).reply)).toEqual(offered);
  });

  it('loses Watch on Refresh once the invoice is paid', async () => {
    env.sandbox.updateInvoice(OPEN, { payStatus: 'paid', status: 'closed' });
    const deps = env.deps();
    const { args, rec } = buttonArgs(OPEN, { actionId: 'refresh_invoice' });
    await actionListener(deps, 'refresh_invoice', createRefreshInvoiceAction(deps))(args);
    expect(rec.responses[0]).toMatchObject({ replace_original: true });
    expectValidMessage(rec.responses[0]);
    expect(buttons(rec.responses[0])).toEqual(['open_payment_page', 'refresh_invoice']);
  });

  it('answers `/invoice watch` of a paid invoice that there is nothing to watch, posting nothing', async () => {
    const { reply, outcome } = await invoiceCommand(`watch ${PAID}`);
    expect(visibleText(reply)).toBe(
      '*Order #1041 — hardware wallet* no longer awaits payment (Closed · Paid): there is nothing left to watch. `/invoice` shows it as it stands.',
    );
    expect(outcome).toBe('invoice_final');
    expect(env.poster.calls).toEqual([]);
  });
});

describe('a pasted payment link', () => {
  it('unfurls with Watch while the invoice awaits payment, with no button once it is paid', async () => {
    const link = (id: string) => `${env.sandbox.payUrl}/pay/${id}`;
    const { args, unfurls } = linkSharedArgs([link(OPEN), link(PAID)]);
    await createLinkSharedEvent(env.deps())(args);
    const [call] = unfurls;
    const cards = call && 'unfurls' in call ? (call.unfurls ?? {}) : {};
    expect(buttons(cards[link(OPEN)])).toEqual(['watch_invoice']);
    const paid = cards[link(PAID)];
    expect(buttons(paid)).toEqual([]);
    expectValidMessage({ text: 'unfurl', blocks: (paid as { blocks: unknown[] }).blocks });
  });
});

describe('the Check payment status answer', () => {
  it('offers Share in thread on every card, and Watch only where it can start a watch', async () => {
    const answers: unknown[] = [];
    const shortcut = {
      type: 'message_action',
      callback_id: 'check_payment',
      response_url: 'https://hooks.slack.test/shortcut',
      message: { type: 'message', ts: '1700000000.000500', text: `${OPEN} ${PAID} ${EXPIRED}` },
      channel: { id: 'C0SUPPORT', name: 'support' },
      user: { id: 'U0AGENT', team_id: HOME_TEAM },
      team: { id: HOME_TEAM, domain: 'home' },
    } as unknown as MessageShortcut;
    await createCheckPaymentShortcut({
      ...env.deps(),
      responseUrls: { post: async (_url, message) => void answers.push(message) },
    })({ shortcut, ack: async () => undefined } as unknown as SlackShortcutMiddlewareArgs<MessageShortcut>);
    expectValidMessage(answers[0]);
    expect(buttons(answers[0])).toEqual([
      'share_invoice:0',
      'watch_invoice:0',
      'share_invoice:1',
      'share_invoice:2',
    ]);
  });
});
