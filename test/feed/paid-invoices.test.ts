import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { FINANCE, HEADING, namesPaid, OTHER_FEED, usePaidWorld } from './paid-world.js';

/** Issue 40, point 5: the feed's posts and digests name the invoices watched or looked up here that were paid. */

const world = usePaidWorld();
const OPEN = DEMO_INVOICE_IDS.open;
const TITLE = 'Order #1042 — annual support plan';
const MINUTE = 60_000;
/** The default digest, 09:00 UTC, the day after the world's clock starts (12:00 UTC). */
const NEXT_DIGEST = Date.parse('2026-11-22T09:00:00Z');

describe('a watched invoice that turns paid', () => {
  it('is named in the next feed post of the channel that watches it, once, and in its digest, once', async () => {
    const bot = world.bot();
    await bot.subscribe(FINANCE);
    await bot.invoice(`watch ${OPEN}`, FINANCE);
    world.env.sandbox.payInvoice(OPEN);
    await bot.after(MINUTE);

    const [post] = world.postsIn(FINANCE);
    expect(visibleText(post)).toContain('received *+149.99* USDT-TRC20');
    expect(visibleText(post)).toContain(
      `*${HEADING}*\n• *${TITLE}* — 149.99 USDT · paid <!date^${Math.floor(world.clock.now / 1000)}`,
    );
    expect(visibleText(post)).toContain(`<${world.env.sandbox.payUrl}/pay/${OPEN}|payment page>`);
    expect(visibleText(post)).toContain('not matched to any balance change');
    expect(post?.text).toContain(`${HEADING}: 1 (149.99 USDT)`);

    // The next movement's post does not name it again.
    world.moveBalance(1);
    await bot.after(MINUTE);
    expect(world.postsIn(FINANCE)).toHaveLength(2);
    expect(namesPaid(world.postsIn(FINANCE)[1])).toBe(false);

    await bot.after(NEXT_DIGEST - world.clock.now);
    await bot.after(24 * 60 * MINUTE);
    const digests = world.digestsIn(FINANCE);
    expect(digests).toHaveLength(2);
    expect(visibleText(digests[0])).toContain(`• *${TITLE}* — 149.99 USDT · paid`);
    expect(digests[0]?.text).toContain(`${HEADING}: 1 (149.99 USDT)`);
    expect(namesPaid(digests[1])).toBe(false);
  });

  it('is not named in another channel’s feed or digest', async () => {
    const bot = world.bot();
    await bot.subscribe(FINANCE);
    await bot.subscribe(OTHER_FEED);
    await bot.invoice(`watch ${OPEN}`, OTHER_FEED);
    world.env.sandbox.payInvoice(OPEN);
    await bot.after(MINUTE);
    expect(namesPaid(world.postsIn(OTHER_FEED)[0])).toBe(true);
    expect(world.postsIn(FINANCE)).toHaveLength(1);
    expect(namesPaid(world.postsIn(FINANCE)[0])).toBe(false);
    await bot.after(NEXT_DIGEST - world.clock.now);
    expect(namesPaid(world.digestsIn(OTHER_FEED)[0])).toBe(true);
    expect(namesPaid(world.digestsIn(FINANCE)[0])).toBe(false);
  });

  it('is not named in a feed that began after it was paid', async () => {
    const bot = world.bot();
    await bot.invoice(`watch ${OPEN}`, FINANCE);
    world.env.sandbox.payInvoice(OPEN);
    await bot.after(MINUTE);
    await bot.subscribe(FINANCE);
    world.moveBalance(1);
    await bot.after(MINUTE);
    expect(world.postsIn(FINANCE)).toHaveLength(1);
    expect(namesPaid(world.postsIn(FINANCE)[0])).toBe(false);
  });

  it('is not named when it is still open, or when its payment status is one never seen', async () => {
    const bot = world.bot();
    await bot.subscribe(FINANCE);
    await bot.invoice(`watch ${OPEN}`, FINANCE);
    world.env.sandbox.updateInvoice(OPEN, { payStatus: 'partially_paid' });
    world.moveBalance(1);
    await bot.after(MINUTE);
    expect(world.postsIn(FINANCE)).toHaveLength(1);
    expect(namesPaid(world.postsIn(FINANCE)[0])).toBe(false);
  });
});

describe('an invoice looked up with /invoice', () => {
  it('is named as "seen paid" when this workspace had not seen it paid before, once however often it is looked up', async () => {
    const bot = world.bot();
    await bot.subscribe(FINANCE);
    await bot.invoice(DEMO_INVOICE_IDS.paid, FINANCE);
    const seenAt = world.clock.now;
    await bot.invoice(DEMO_INVOICE_IDS.paid, FINANCE);
    world.moveBalance(1);
    await bot.after(MINUTE);
    const [post] = world.postsIn(FINANCE);
    expect(visibleText(post)).toContain(`seen paid <!date^${Math.floor(seenAt / 1000)}`);
    expect(visibleText(post).match(/^• /gm)).toHaveLength(1);
  });

  it('is not named when it was seen open here and then paid in another channel’s watch', async () => {
    const bot = world.bot();
    await bot.subscribe(FINANCE);
    await bot.invoice(`watch ${OPEN}`, 'C0SUPPORT');
    world.env.sandbox.payInvoice(OPEN);
    await bot.after(MINUTE);
    // Seen paid by the watch elsewhere first: a lookup here now is no news of a payment.
    await bot.invoice(OPEN, FINANCE);
    world.moveBalance(1);
    await bot.after(MINUTE);
    expect(world.postsIn(FINANCE).some(namesPaid)).toBe(false);
  });

  it('is named when the lookup here sees the payment first', async () => {
    const bot = world.bot();
    await bot.subscribe(FINANCE);
    await bot.invoice(OPEN, FINANCE);
    world.env.sandbox.payInvoice(OPEN);
    await bot.invoice(OPEN, FINANCE);
    await bot.after(MINUTE);
    expect(visibleText(world.postsIn(FINANCE)[0])).toContain(`• *${TITLE}* — 149.99 USDT · seen paid`);
  });
});
