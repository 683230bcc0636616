import { describe, expect, it } from 'vitest';
import { num, type WireBalanceEntry } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { commandBody } from '../support/slack-requests.js';
import { askBot, startStack } from './harness.js';
import { manyInvoices } from './invoices.js';

/** More people at once than the service takes, and answers far larger than the document's examples. */

const INVOICES = 100;
const invoiceIds = Array.from(
  { length: INVOICES },
  (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
);
const invoices = manyInvoices(invoiceIds);
/** About 1 MB of balance: 20,000 currencies. */
const balances: WireBalanceEntry[] = Array.from({ length: 20_000 }, (_, i) => ({
  id: `C${i}`,
  title: `C${i}`,
  balance: num(`${i}.5`),
}));

async function burst(stack: Awaited<ReturnType<typeof startStack>>, bodies: ((url: string) => string)[]) {
  return Promise.all(
    bodies.map(async (body) => {
      const { ack, reply } = await askBot(stack.bot, stack.slack, body, 30_000);
      return { ackMs: ack.ms, reply };
    }),
  );
}

describe('a crowd', () => {
  it('gets every invoice from a slow but healthy service: 100 at once, none "did not answer in time"', async () => {
    const stack = await startStack({
      sandbox: { invoices, latencyMs: 1000 },
      env: { PAYMENT_API_TIMEOUT_MS: '1500' },
    });
    try {
      const results = await burst(
        stack,
        invoiceIds.map(
          (id) => (url: string) => commandBody({ command: '/invoice', text: id, response_url: url }),
        ),
      );
      expect(Math.max(...results.map((r) => r.ackMs))).toBeLessThan(3000);
      const texts = results.map((r) => visibleText(r.reply));
      expect(texts.filter((t) => t.includes('did not answer in time'))).toEqual([]);
      expect(texts.every((t, i) => t.includes(`Order ${i}`))).toBe(true);
      expect(stack.slack.problems).toEqual([]);
    } finally {
      await stack.close();
    }
  }, 60_000);

  it('acks 50 /balance within 3 s when the balance is a 1 MB answer of 20,000 currencies', async () => {
    // The answer takes 300 ms, so the fifty, sent together, all ask while the first call is out.
    const stack = await startStack({ sandbox: { balances, latencyMs: 300 } });
    try {
      const results = await burst(
        stack,
        Array.from(
          { length: 50 },
          () => (url: string) => commandBody({ command: '/balance', text: '', response_url: url }),
        ),
      );
      expect(Math.max(...results.map((r) => r.ackMs))).toBeLessThan(3000);
      for (const { reply } of results) expect(visibleText(reply)).toMatch(/\d+ more currencies not shown/);
      expect(stack.slack.problems).toEqual([]);
      expect(stack.sandbox.requests.length).toBeLessThanOrEqual(2); // one shared call, or two
    } finally {
      await stack.close();
    }
  }, 60_000);
});
