import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FairSlots } from '../../src/payments/fair-slots.js';
import {
  BusyError,
  CircuitBreaker,
  CircuitOpenError,
  type PaymentsClient,
} from '../../src/payments/index.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { invoiceId } from '../support/factories.js';
import { useSandboxClient } from '../support/sandbox-client.js';

/** How many calls of one key go to the service at once, on a person's lane and on the background one. */

const LATENCY_MS = 150;

const service = useSandboxClient();

/**
 * Asks `count` different invoices at once, each answered after LATENCY_MS; how many requests
 * reached the service together before the first answer, and in all.
 */
async function together(c: PaymentsClient, count: number, call: { background?: boolean } = {}) {
  service.sandbox.setLatency(LATENCY_MS);
  let settled = 0;
  let sentBeforeFirstAnswer = -1;
  const calls = Array.from({ length: count }, () =>
    c.getInvoice(invoiceId(randomUUID()), call).catch(() => {
      // Unknown invoices: the service answers "not found", which is all these calls need.
      if (settled === 0) sentBeforeFirstAnswer = service.sandbox.requests.length;
      settled += 1;
    }),
  );
  await Promise.all(calls);
  return { sentBeforeFirstAnswer, sent: service.sandbox.requests.length };
}

describe('a person’s calls', () => {
  it('go `concurrency` at a time when the client has slots of its own', async () => {
    expect(await together(service.client({ concurrency: 2 }), 3)).toEqual({
      sentBeforeFirstAnswer: 2,
      sent: 3,
    });
  });
});

describe('background calls', () => {
  const background = (extra: { concurrency?: number; slots?: FairSlots } = {}) =>
    service.client({ background: { dispatcher: service.pool, pace: async () => true, ...extra } });

  it('go four at a time by default', async () => {
    expect(await together(background(), 6, { background: true })).toEqual({
      sentBeforeFirstAnswer: 4,
      sent: 6,
    });
  });

  it('go `concurrency` at a time on slots shared with other keys, however many slots there are', async () => {
    const shared = new FairSlots({ slots: 4 });
    expect(await together(background({ concurrency: 1, slots: shared }), 2, { background: true })).toEqual({
      sentBeforeFirstAnswer: 1,
      sent: 2,
    });
  });
});

describe('what a refused call says', () => {
  it.each([
    [1, '1 call to the payment service is already waiting'],
    [2, '2 calls to the payment service are already waiting'],
  ])('says how many calls are already waiting when the queue (of %i) is full', async (maxQueue, message) => {
    service.sandbox.setLatency(LATENCY_MS);
    const c = service.client({ concurrency: 1, maxQueue });
    // One call is under way, `maxQueue` wait, and the one after them is refused.
    const ids = [...Object.values(DEMO_INVOICE_IDS), randomUUID()].slice(0, maxQueue + 2);
    const results = await Promise.allSettled(ids.map((id) => c.getInvoice(invoiceId(id))));
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(BusyError);
    expect(refused[0]).toMatchObject({ message });
  });

  it('says the service is not answering and that no call was made while the breaker is open', async () => {
    const breaker = new CircuitBreaker({ threshold: 1, openMs: 60_000 });
    const c = service.client({ breaker, retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } });
    service.sandbox.failNext({ kind: 'status', status: 503 });
    await expect(c.getBalance()).rejects.toMatchObject({ code: 'service_unavailable' });
    const refused = c.getBalance();
    await expect(refused).rejects.toBeInstanceOf(CircuitOpenError);
    await expect(refused).rejects.toThrow(
      'the payment service is not answering (circuit open); no call was made',
    );
  });

  it('names what was wrong with an invoice id that is not one', async () => {
    await expect(service.client().getInvoice('../balance' as never)).rejects.toThrow(
      new TypeError('getInvoice: not an invoice id'),
    );
  });
});
