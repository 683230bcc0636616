import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { commandBody } from '../support/slack-requests.js';
import { askBot, type Stack, startStack, until, watchInvoice } from './harness.js';
import { manyInvoices } from './invoices.js';

/**
 * The payment service down, and the payment service slow: the circuit breaker answers the first
 * at once and never mistakes the second for it. Both run with the production deadline (8 s).
 */

const invoiceIds = Array.from(
  { length: 100 },
  (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
);
const invoices = manyInvoices(invoiceIds);
const PRODUCTION_DEADLINE = { PAYMENT_API_TIMEOUT_MS: '8000' };

/** Sends every command at once; resolves with each one's ack time, reply and when the reply came. */
async function burst(stack: Stack, bodies: ((url: string) => string)[]) {
  const started = performance.now();
  const results = await Promise.all(
    bodies.map(async (body) => {
      const { ack, reply } = await askBot(stack.bot, stack.slack, body, 40_000);
      return { ackMs: ack.ms, reply, text: visibleText(reply), doneMs: performance.now() - started };
    }),
  );
  return { results, lastMs: Math.max(...results.map((r) => r.doneMs)) };
}

const invoiceCommand = (id: string) => (url: string) =>
  commandBody({ command: '/invoice', text: id, response_url: url });
const balanceCommand = () => (url: string) =>
  commandBody({ command: '/balance', text: '', response_url: url });

describe('the payment service down', () => {
  it('answers 100 people at once (a quarter /balance) within 12 s, each privately, every ack under 3 s', async () => {
    const stack = await startStack({ sandbox: { invoices }, env: PRODUCTION_DEADLINE });
    try {
      stack.sandbox.failNext({ kind: 'hang' }, 1000);
      const { results, lastMs } = await burst(
        stack,
        invoiceIds.map((id, i) => (i % 4 === 0 ? balanceCommand() : invoiceCommand(id))),
      );
      expect(Math.max(...results.map((r) => r.ackMs))).toBeLessThan(3000);
      expect(results.map((r) => r.reply.response_type)).toEqual(results.map(() => 'ephemeral'));
      for (const { text } of results)
        expect(text).toMatch(
          /The payment service is not answering|The payment service did not answer in time/,
        );
      console.info(
        `outage: 100 answered, the last after ${Math.round(lastMs)} ms; ack max ${Math.round(Math.max(...results.map((r) => r.ackMs)))} ms`,
      );
      expect(lastMs).toBeLessThan(12_000);
      // Those whose call had not started (75 invoices and one shared balance, 32 at a time) are
      // let go when the breaker opens, not after a deadline of their own.
      expect(results.filter((r) => r.text.includes('is not answering')).length).toBeGreaterThanOrEqual(40);
      // Only the calls that were under way when it opened reached the service.
      expect(stack.sandbox.requests.length).toBeLessThanOrEqual(32);
      expect(stack.slack.problems).toEqual([]);
      console.info(
        `outage: 100 answered, the last after ${Math.round(lastMs)} ms; ack max ${Math.round(Math.max(...results.map((r) => r.ackMs)))} ms`,
      );
    } finally {
      await stack.close();
    }
  }, 60_000);
});

describe('the payment service slow but healthy', () => {
  it('delivers 100 distinct invoices answered in 3 s each, none reported as a timeout', async () => {
    const stack = await startStack({ sandbox: { invoices, latencyMs: 3000 }, env: PRODUCTION_DEADLINE });
    try {
      const { results, lastMs } = await burst(stack, invoiceIds.map(invoiceCommand));
      expect(Math.max(...results.map((r) => r.ackMs))).toBeLessThan(3000);
      expect(results.filter((r) => /did not answer in time|not answering/.test(r.text))).toEqual([]);
      expect(results.every((r, i) => r.text.includes(`Order ${i}`))).toBe(true);
      expect(stack.slack.problems).toEqual([]);
      console.info(`slow service: 100 delivered, the last after ${Math.round(lastMs)} ms`);
    } finally {
      await stack.close();
    }
  }, 90_000);
});

describe('watches through an outage', () => {
  it('stop polling while the breaker is open and tell the thread once the service answers again', async () => {
    const stack = await startStack({ env: { WATCH_POLL_SECONDS: '1', PAYMENT_API_TIMEOUT_MS: '300' } });
    try {
      const { slack, sandbox, bot } = stack;
      await watchInvoice(bot, slack, DEMO_INVOICE_IDS.open, 'C0SUPPORT');
      const [card] = slack.repliesIn('C0SUPPORT');
      if (!card) throw new Error('no live card');
      // The service hangs; five people asking at once open the breaker.
      sandbox.failNext({ kind: 'hang' }, 1000);
      const asked = await Promise.all(
        invoiceIds
          .slice(0, 5)
          .map((id) =>
            askBot(bot, slack, (url) => commandBody({ command: '/invoice', text: id, response_url: url })),
          ),
      );
      expect(asked.map((a) => a.reply.response_type)).toEqual(asked.map(() => 'ephemeral'));
      await untilScraped(bot.url, 'slackbot_payment_breaker_state 1');
      // While it is open, nothing is polled: not one request in the next few seconds.
      const before = sandbox.requests.length;
      await new Promise((r) => setTimeout(r, 3000));
      expect(sandbox.requests.length).toBe(before);

      sandbox.clearFaults();
      sandbox.updateInvoice(DEMO_INVOICE_IDS.open, { payStatus: 'paid', status: 'closed' });
      // At most the open period (10 s) and a poll later, the background probe closes it and the thread hears.
      // The payment is final: the same check tells the change and, in the same reply, that the watch has ended.
      await until(() => slack.repliesIn('C0SUPPORT', card.ts).length >= 1, 'the thread reply', 20_000);
      expect(slack.repliesIn('C0SUPPORT', card.ts).map((m) => visibleText(m))).toEqual([
        expect.stringContaining(
          '*Payment*: Not paid → Paid\nNo longer watching *Order #1042 — annual support plan*: it no longer awaits payment',
        ),
      ]);
      expect(await scrape(bot.url)).toContain('slackbot_payment_breaker_state 0');
      const log = () => bot.logs().map((l) => l.msg);
      await expect
        .poll(log)
        .toContain('the payment service is not answering: calls fail at once, watches and feeds pause');
      await expect.poll(log).toContain('the payment service answers again: watches and feeds resume');
    } finally {
      await stack.close();
    }
  }, 60_000);
});

async function scrape(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

/** Resolves once /metrics shows `line`; fails after 5 s. */
async function untilScraped(url: string, line: string): Promise<void> {
  const started = Date.now();
  while (!(await scrape(url)).includes(line)) {
    if (Date.now() - started > 5000) throw new Error(`/metrics never showed ${line}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
