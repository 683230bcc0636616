import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { demoInvoices, num, type WireInvoice } from '../../src/sandbox/data.js';
import { startSlackStandIn } from '../support/slack-stand-in.js';
import { ask, installation, useTenantsWorld } from '../support/tenants-world.js';

/** A property: whatever several installations ask, in whatever order, nobody sees another's money. */
const world = useTenantsWorld();
const { tenants } = world;

describe('any interleaving of requests from several installations', () => {
  /** Merchant i: its own key, a balance in its own currency, and an invoice of the one shared id. */
  const merchant = (i: number) => ({
    key: `merchant-${i}-property-key-0a1b2c`,
    currency: `COIN${i}X`,
    shop: `Shop number ${i}`,
  });
  const SHARED_INVOICE = '7e57ab1e-0000-4000-8000-00000000abcd';
  beforeAll(() => {
    for (let i = 0; i < 5; i += 1) {
      const m = merchant(i);
      const [template] = demoInvoices(world.sandbox.payUrl);
      world.sandbox.addMerchant(m.key, {
        balances: [{ id: m.currency, title: m.currency, balance: num(`${i}.5`) }],
        invoices: [
          {
            ...(template as WireInvoice),
            id: SHARED_INVOICE,
            shop: { title: m.shop, successUrl: null, failUrl: null },
          },
        ],
      });
    }
  });

  it('answers each request with its own installation’s money only, whatever the order, rotations and feeds included', async () => {
    const slack = await startSlackStandIn({ teamId: 'T0', botToken: 'xoxb-T0-0' });
    slack.conversations.set('G0FIN', { id: 'G0FIN', is_private: true });
    const step = fc.record({
      who: fc.nat({ max: 4 }),
      what: fc.constantFrom('balance', 'invoice', 'feed', 'rotate'),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 5 }),
        fc.array(step, { minLength: 1, maxLength: 12 }),
        async (n, steps) => {
          const keys = Object.fromEntries(Array.from({ length: n }, (_, i) => [`T${i}`, merchant(i).key]));
          const t = tenants(keys, { max: 3, slackApiUrl: slack.apiUrl });
          await world.store.db.deleteFrom('feed_subscriptions').execute();
          const posted = slack.calls.length;
          const tokens = Array.from({ length: n }, (_, i) => `xoxb-T${i}-0`);
          const answers = await Promise.all(
            steps.map(async ({ who, what }, k) => {
              const i = who % n;
              const inst = installation(`T${i}`, 1);
              if (what === 'rotate') {
                tokens[i] = `xoxb-T${i}-${k + 1}`;
                return undefined;
              }
              const text = { balance: '', invoice: SHARED_INVOICE, feed: 'subscribe' }[what];
              const reply = await ask(
                t.tenants,
                inst,
                what === 'invoice' ? '/invoice' : '/balance',
                text,
                tokens[i],
                what === 'feed' ? 'G0FIN' : 'C0SUPPORT',
              );
              return { i, what, reply };
            }),
          );
          for (const answer of answers) {
            if (!answer) continue;
            const own = merchant(answer.i);
            if (answer.what === 'feed')
              expect(answer.reply).toMatch(/the payments feed is on|already receives the payments feed/);
            else expect(answer.reply).toContain(answer.what === 'balance' ? own.currency : own.shop);
            for (let j = 0; j < n; j += 1) {
              if (j === answer.i) continue;
              expect(answer.reply).not.toContain(merchant(j).currency);
              expect(answer.reply).not.toContain(merchant(j).shop);
            }
          }
          // Each feed's first message went to the channel with its own installation's token, with its own balance.
          const feeds = slack.calls.slice(posted).filter((c) => c.method === 'chat.postMessage');
          expect(feeds).toHaveLength(
            new Set(answers.filter((a) => a?.what === 'feed').map((a) => a?.i)).size,
          );
          for (const call of feeds) {
            const i = Number(/^xoxb-T(\d)-/.exec(call.token ?? '')?.[1]);
            const text = JSON.stringify(call.args);
            expect(text).toContain(merchant(i).currency);
            for (let j = 0; j < n; j += 1) if (j !== i) expect(text).not.toContain(merchant(j).currency);
          }
          expect(t.tenants.size).toBeLessThanOrEqual(3);
        },
      ),
      { numRuns: 40 },
    );
    expect(slack.problems).toEqual([]);
    await slack.close();
  });
});
