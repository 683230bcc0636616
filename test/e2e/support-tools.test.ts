import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import {
  blockActionsBody,
  eventBody,
  functionExecutedBody,
  messageActionBody,
  postToBot,
} from '../support/slack-requests.js';
import { SECRETS } from './harness.js';
import { useStack } from './use-stack.js';

/** The message shortcut, the App Home and the workflow step, driven as Slack drives them. */

const stack = useStack({ env: { BALANCE_ALLOWED_USERS: 'U0FINANCE' } });
const { open: OPEN, paid: PAID } = DEMO_INVOICE_IDS;
const post = (body: string, contentType?: string) =>
  postToBot(`${stack.bot.url}/slack/events`, body, SECRETS.signingSecret, contentType ? { contentType } : {});

describe('Check payment status', () => {
  it('answers a message with two links and a typo with one private answer holding two cards', async () => {
    const responseUrl = stack.slack.responseUrl();
    const ack = await post(
      messageActionBody({
        callbackId: 'check_payment',
        responseUrl,
        message: {
          ts: '1700000000.000700',
          text: `Paid <${stack.sandbox.payUrl}/pay/${OPEN}>? And ${stack.sandbox.payUrl}/pay/${PAID}. Also ${OPEN.slice(0, 20)}`,
        },
      }),
    );
    expect(ack.status).toBe(200);
    expect(ack.ms).toBeLessThan(1000);
    const { body } = await stack.slack.waitForPost(responseUrl);
    expect(body.response_type).toBe('ephemeral');
    const text = visibleText(body);
    // Two cards; only the open invoice has an expiry to meet, the paid one's is past caring.
    expect(text).toContain('*Order #1042 — annual support plan*\nOpen · Not paid · 149.99 USDT\nExpiry: ');
    expect(text).toContain('*Order #1041 — hardware wallet*\nClosed · Paid · 0.0042 BTC');
    expect(text.match(/Expiry:/g)).toHaveLength(1);
    expect(text).not.toContain('expired');
    expect(stack.sandbox.requests).toHaveLength(2);
  });

  it('Share in thread posts the full card in the message’s thread', async () => {
    const ack = await post(
      blockActionsBody({
        actionId: 'share_invoice:0',
        value: `${OPEN} 1700000000.000700`,
        responseUrl: stack.slack.responseUrl(),
      }),
    );
    expect(ack.status).toBe(200);
    const call = await stack.slack.waitForCall('chat.postMessage');
    expect(call.args).toMatchObject({ channel: 'C0SUPPORT', thread_ts: '1700000000.000700' });
    expect(visibleText({ blocks: call.args.blocks })).toContain('by <@U0CLICKER>');
  });
});

describe('the App Home', () => {
  const openHome = async (user: string) => {
    const before = stack.slack.homeViews.length;
    const ack = await post(
      eventBody({ type: 'app_home_opened', user, channel: 'D0HOME', tab: 'home', event_ts: '1.2' }),
      'application/json',
    );
    expect(ack.status).toBe(200);
    const started = Date.now();
    while (stack.slack.homeViews.length === before && Date.now() - started < 5000)
      await new Promise((r) => setTimeout(r, 20));
    const published = stack.slack.homeViews.at(-1);
    expect(published?.userId).toBe(user);
    return visibleText(published?.view);
  };

  it('publishes the balance for someone allowed', async () => {
    const text = await openHome('U0FINANCE');
    expect(text).toContain('*Bitcoin*\n0.0123456 BTC');
    // Currencies at 0 are counted in one line, not listed as rows of 0.
    expect(text).toContain('and 2 more at 0');
    expect(text).not.toMatch(/\b(ETH|TRX)\b/);
    expect(text).toContain('Your watches (0)');
  });

  it('publishes a view without the balance for someone else, calling nothing for it', async () => {
    const text = await openHome('U0SOMEONE');
    expect(text).toContain('The balance is shown only to the people the bot’s admin allows');
    expect(text).not.toContain('BTC');
    expect(stack.sandbox.requests).toHaveLength(0);
  });
});

describe('the Get invoice workflow step', () => {
  it('completes with the invoice’s facts, exact, using the step’s own token', async () => {
    const ack = await post(
      functionExecutedBody('get_invoice', { invoice: OPEN }, 'Fx0OK'),
      'application/json',
    );
    expect(ack.status).toBe(200);
    const call = await stack.slack.waitForCall('functions.completeSuccess');
    expect(call.args.function_execution_id).toBe('Fx0OK');
    expect(call.args.outputs).toEqual({
      status: 'open',
      pay_status: 'none',
      amount: '149.99',
      currency: 'USDT',
      title: 'Order #1042 — annual support plan',
      link: `${stack.sandbox.payUrl}/pay/${OPEN}`,
      expires_at: expect.any(Number),
      shop: 'Acme Hardware Store',
    });
    expect(stack.slack.functionResults.at(-1)?.token).toBe('xwfp-e2e-function-token-0000');
  });

  it('fails with a one-line reason for an unknown invoice', async () => {
    const missing = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
    await post(functionExecutedBody('get_invoice', { invoice: missing }, 'Fx0MISSING'), 'application/json');
    const call = await stack.slack.waitForCall('functions.completeError');
    expect(call.args).toMatchObject({
      function_execution_id: 'Fx0MISSING',
      error: `Invoice not found (invoice ${missing})`,
    });
  });

  it('never logs the step’s token', () => {
    expect(stack.bot.output.join('\n')).not.toContain('xwfp-e2e-function-token-0000');
  });
});
