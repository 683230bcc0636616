import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { commandBody } from '../support/slack-requests.js';
import { command, post, stack } from './http-stack.js';

/** The started bot (HTTP mode) answering /balance and /invoice: in the ack or through the response_url, in time. */

export function balanceCommand(): void {
  describe('/balance', () => {
    it('answers in the ack, ephemerally, with every currency digit for digit, grouped, the zeros counted', async () => {
      const { reply, via } = await command('/balance', '');
      expect(via).toBe('ack');
      expect(reply.response_type).toBe('ephemeral');
      const text = visibleText(reply);
      for (const row of [
        '*Bitcoin*\n0.0123456 BTC',
        '*Tether (TRC-20)*\n1,520.5 USDT-TRC20',
        '*Litecoin*\n0.0000001 LTC',
        '*Dogecoin*\n4,200.75 DOGE',
      ]) {
        expect(text).toContain(row);
      }
      // the two at 0 (ETH, TRX) counted in one line, not listed
      expect(text).toContain('and 2 more at 0');
      expect(text).not.toContain('*Ethereum*');
      // the notification text keeps the digits ungrouped
      expect(reply.text).toContain('1520.5 USDT-TRC20');
      expect(stack.sandbox.requests.map((r) => r.path)).toEqual(['/api/v2/balance']);
    });

    it('explains itself on "help"', async () => {
      const { reply } = await command('/balance', 'help');
      expect(reply.response_type).toBe('ephemeral');
      expect(visibleText(reply)).toContain('summed over all projects');
    });

    it('refuses a member of another workspace without calling the service', async () => {
      const { reply } = await command('/balance', '', { team_id: 'T0GUESTORG' });
      expect(reply.response_type).toBe('ephemeral');
      expect(visibleText(reply)).toContain('only for members of this workspace');
      expect(stack.sandbox.requests).toHaveLength(0);
    });

    it('tells an admin to check PAYMENT_API_KEY when the service rejects the key', async () => {
      stack.sandbox.failNext({
        kind: 'status',
        status: 401,
        body: '{"status":401,"name":"UnauthorizedError","message":"shop not found","details":"check api key"}',
      });
      const { reply } = await command('/balance', '');
      expect(reply.response_type).toBe('ephemeral');
      expect(visibleText(reply)).toContain('`PAYMENT_API_KEY`');
    });

    it('acks by 2 s and answers through the response_url when the service is slow', async () => {
      stack.sandbox.setLatency(2500);
      const { ack, reply, via } = await command('/balance', '');
      expect(via).toBe('response_url');
      expect(ack.ms).toBeLessThan(2200);
      expect(reply.response_type).toBe('ephemeral');
      expect(visibleText(reply)).toContain('0.0123456 BTC');
    });
  });
}

export function invoiceCommand(): void {
  describe('/invoice', () => {
    const id = DEMO_INVOICE_IDS.open;

    it('shows the invoice in the channel with its payment-page and Refresh buttons', async () => {
      const { reply, via } = await command('/invoice', id);
      expect(via).toBe('ack');
      expect(reply.response_type).toBe('in_channel');
      const text = visibleText(reply);
      expect(text).toContain('Order #1042 — annual support plan');
      expect(text).toContain('*Amount*\n149.99 USDT');
      expect(JSON.stringify(reply)).toContain(`"url":"${stack.sandbox.payUrl}/pay/${id}"`);
      expect(JSON.stringify(reply)).toContain('"action_id":"refresh_invoice"');
    });

    it.each([
      ['an upper-case id with spaces', () => `  ${id.toUpperCase()} `],
      ['a pasted payment link', () => `${stack.sandbox.payUrl}/pay/${id}`],
      ['a payment link as Slack escapes it', () => `<${stack.sandbox.payUrl}/pay/${id}|pay>`],
    ])('accepts %s', async (_label, text) => {
      const { reply } = await command('/invoice', text());
      expect(reply.response_type).toBe('in_channel');
      expect(stack.sandbox.requests.map((r) => r.path)).toEqual([`/api/v2/invoice/${id}`]);
    });

    it.each([
      ['', 'Give an invoice id or paste a payment link'],
      ['help', 'shows one invoice'],
      ['where is my money?', '`where is my money?` is not an invoice id'],
      ['../balance', '`../balance` is not an invoice id'],
    ])('answers %j ephemerally without calling the service', async (text, phrase) => {
      const { reply, via } = await command('/invoice', text);
      expect(via).toBe('ack');
      expect(reply.response_type).toBe('ephemeral');
      expect(visibleText(reply)).toContain(phrase);
      expect(stack.sandbox.requests).toHaveLength(0);
    });

    it('names the id when no invoice has it', async () => {
      const missing = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
      const { reply } = await command('/invoice', missing);
      expect(reply.response_type).toBe('ephemeral');
      expect(visibleText(reply)).toContain(`no invoice \`${missing}\``);
    });

    it.each([
      ['answers 500', { kind: 'status' as const, status: 500 }, 1, 'The payment service is unavailable'],
      [
        'keeps answering 503',
        { kind: 'status' as const, status: 503 },
        3,
        'The payment service is unavailable',
      ],
      ['resets the connection', { kind: 'reset' as const }, 3, 'The payment service is unavailable'],
      ['answers HTML', { kind: 'html' as const }, 1, 'could not read'],
      [
        'rate-limits',
        { kind: 'status' as const, status: 429, headers: { 'retry-after': '300' } },
        1,
        'Try again in 5 minutes',
      ],
    ])('explains it ephemerally when the service %s', async (_label, fault, times, phrase) => {
      stack.sandbox.failNext(fault, times);
      const { reply } = await command('/invoice', id);
      expect(reply.response_type).toBe('ephemeral');
      expect(visibleText(reply)).toContain(phrase);
    });

    it('acks within 3 s while the service hangs, then says it timed out', async () => {
      stack.sandbox.failNext({ kind: 'hang' });
      const { ack, reply, via } = await command('/invoice', id);
      expect(via).toBe('response_url');
      expect(ack.ms).toBeLessThan(2200);
      expect(reply.response_type).toBe('ephemeral');
      expect(visibleText(reply)).toContain('did not answer in time');
    });

    it('tries the response_url again when Slack answers it with a 500', async () => {
      stack.sandbox.setLatency(1800);
      const responseUrl = stack.slack.responseUrl({ status: 500, failures: 1 });
      const ack = await post(commandBody({ command: '/invoice', text: id, response_url: responseUrl }));
      expect(ack.body).toBe('');
      const { body } = await stack.slack.waitForPost(responseUrl);
      expect(body.response_type).toBe('in_channel');
      expect(visibleText(body)).toContain('Order #1042');
    });

    it('keeps working when the response_url is dead', async () => {
      stack.sandbox.setLatency(1800);
      const dead = stack.slack.responseUrl({ status: 404 });
      const ack = await post(
        commandBody({ command: '/invoice', text: id, response_url: dead, user_id: 'U0DEADURL' }),
      );
      expect(ack.status).toBe(200);
      await expect
        .poll(() => stack.bot.logs().find((l) => l.user === 'U0DEADURL')?.delivery, { timeout: 5000 })
        .toBe('failed');
      stack.sandbox.setLatency(0);
      const { reply } = await command('/invoice', id);
      expect(reply.response_type).toBe('in_channel');
    });
  });
}
