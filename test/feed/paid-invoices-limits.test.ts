import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { installationId, ONE_WORKSPACE } from '../../src/store/keys.js';
import { invoiceSightings } from '../../src/watches/invoices-seen.js';
import { visibleText } from '../support/block-kit.js';
import { amount, invoice, invoiceId } from '../support/factories.js';
import { watchRequest } from '../support/watch-world.js';
import { FINANCE, HEADING, namesPaid, usePaidWorld } from './paid-world.js';

/** Issue 40, point 5, at its edges: many paid invoices, hostile titles, another installation's. */

const world = usePaidWorld();
const OPEN = DEMO_INVOICE_IDS.open;
const MINUTE = 60_000;

/** `count` paid invoices looked up in `channel` by `installation`, as the lookups record them. */
async function seenPaid(count: number, channel = FINANCE, installation = ONE_WORKSPACE) {
  const sightings = invoiceSightings(installation);
  for (let i = 1; i <= count; i += 1) {
    const paid = invoice({
      id: invoiceId(randomUUID()),
      title: `Order #${i}`,
      amount: amount(`${i}000000.0000001`),
      payStatus: 'paid',
      status: 'closed',
    });
    await sightings.lookedUp(world.env.store, paid, channel, world.clock.now);
  }
}

const bullets = (text: string) => text.match(/^• .*$/gm) ?? [];

describe('many paid invoices', () => {
  it('names the first 10 of 25 in the next post, digit for digit, and counts the rest', async () => {
    const bot = world.bot();
    await bot.subscribe(FINANCE);
    await seenPaid(25);
    world.moveBalance(1);
    await bot.after(MINUTE);
    const [post] = world.postsIn(FINANCE);
    const lines = bullets(visibleText(post));
    expect(lines).toHaveLength(10);
    expect(lines[0]).toMatch(/^• \*Order #1\* — 1,000,000\.0000001 USDT · seen paid /);
    expect(lines[9]).toMatch(/^• \*Order #10\* — 10,000,000\.0000001 USDT · seen paid /);
    expect(visibleText(post)).toContain('and 15 more: 25 in all');
    expect(post?.text).toContain(`${HEADING}: 25 (1000000.0000001 USDT, 2000000.0000001 USDT,`);

    // All 25 were this post's: the next one names none of them.
    world.moveBalance(2);
    await bot.after(MINUTE);
    expect(namesPaid(world.postsIn(FINANCE)[1])).toBe(false);
  });

  it('names the first 10 of 25 in the digest and counts the rest', async () => {
    const bot = world.bot();
    await bot.subscribe(FINANCE);
    await seenPaid(25);
    await bot.after(Date.parse('2026-11-22T09:00:00Z') - world.clock.now);
    const [digest] = world.digestsIn(FINANCE);
    expect(bullets(visibleText(digest))).toHaveLength(10);
    expect(visibleText(digest)).toContain('and 15 more: 25 in all');
  });
});

describe('what is named', () => {
  it('shows a title that looks like markup as text, never a ping, a link or formatting', async () => {
    const bot = world.bot();
    await bot.subscribe(FINANCE);
    world.env.sandbox.updateInvoice(OPEN, { title: '<!channel> & <https://evil.example|Refund> *now*' });
    await bot.invoice(`watch ${OPEN}`, FINANCE);
    world.env.sandbox.payInvoice(OPEN);
    await bot.after(MINUTE);
    const [post] = world.postsIn(FINANCE); // checked as Block Kit, markup included
    expect(bullets(visibleText(post))[0]).toMatch(
      /^• \*&lt;!channel&gt; &amp; &lt;https:\/\/evil\.example\|Refund&gt; \*now\*\* — 149\.99 USDT · paid /,
    );
  });

  it('links no payment page the invoice card would not link', async () => {
    const bot = world.bot();
    await bot.subscribe(FINANCE);
    world.env.sandbox.updateInvoice(OPEN, { link: 'javascript:alert(1)' });
    await bot.invoice(`watch ${OPEN}`, FINANCE);
    world.env.sandbox.payInvoice(OPEN);
    await bot.after(MINUTE);
    const line = bullets(visibleText(world.postsIn(FINANCE)[0]))[0];
    expect(line).toMatch(/· paid <!date\^\d+\^[^>]+>$/);
    expect(line).not.toContain('javascript');
  });

  it('leaves out what another installation watched in a channel of the same id', async () => {
    const bot = world.bot();
    await bot.subscribe(FINANCE);
    const other = world.instance({ installation: installationId('T0OTHER'), name: 'other' });
    await other.watches.start(watchRequest({ channelId: FINANCE }));
    world.env.sandbox.payInvoice(OPEN);
    world.clock.now += MINUTE;
    await other.tick();
    expect(await world.env.store.db.selectFrom('invoices_paid').select('installation_id').execute()).toEqual([
      { installation_id: 'T0OTHER' },
    ]);
    await bot.after(MINUTE);
    expect(world.postsIn(FINANCE)).toHaveLength(1);
    expect(namesPaid(world.postsIn(FINANCE)[0])).toBe(false);
  });
});

describe('how long it is kept', () => {
  it('is forgotten with the feed’s readings, 8 days on', async () => {
    const bot = world.bot();
    await bot.subscribe(FINANCE);
    await seenPaid(1);
    const count = async () =>
      (await world.env.store.db.selectFrom('invoices_paid').select('id').execute()).length;
    await bot.after(8 * 24 * 60 * MINUTE - MINUTE);
    expect(await count()).toBe(1);
    await bot.after(2 * MINUTE);
    expect(await count()).toBe(0);
  });
});
