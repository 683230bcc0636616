import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { FINANCE, namesPaid, usePaidWorld } from './paid-world.js';

/**
 * Issue 40, "a digest finance can reconcile": each invoice watched here that was paid is named in
 * exactly one digest of the channel, whether a digest went out late or was skipped.
 */

const world = usePaidWorld();
const OPEN = DEMO_INVOICE_IDS.open;
const NAMED = '• *Order #1042 — annual support plan* — 149.99 USDT · paid';
const MINUTE = 60_000;
const at = (iso: string) => Date.parse(iso);

/** A feed on in the finance channel, which watches an invoice that is then paid. */
async function watchedAndPaid() {
  const bot = world.bot();
  await bot.subscribe(FINANCE);
  await bot.invoice(`watch ${OPEN}`, FINANCE);
  world.env.sandbox.payInvoice(OPEN);
  return bot;
}

describe('an invoice paid in a digest’s period', () => {
  it('is named in the next digest sent when the one due was skipped, 12 hours late', async () => {
    const bot = await watchedAndPaid();
    await bot.after(MINUTE);
    // The bot was down from then until 21:00 the next day: the digest due at 09:00 is skipped.
    await bot.after(at('2026-11-22T21:00:00Z') - world.clock.now);
    expect(world.digestsIn(FINANCE)).toEqual([]);
    await bot.after(at('2026-11-23T09:00:00Z') - world.clock.now);
    const [digest] = world.digestsIn(FINANCE);
    expect(visibleText(digest)).toContain(NAMED);
  });

  it('is named by a late digest, and not again by the next one on time', async () => {
    const bot = await watchedAndPaid();
    // The bot was down until 20:00 the next day: the watch sees the payment then, and the digest
    // due at 09:00 goes out 11 hours late.
    await bot.after(at('2026-11-22T20:00:00Z') - world.clock.now);
    await bot.after(at('2026-11-23T09:00:00Z') - world.clock.now);
    const [late, next] = world.digestsIn(FINANCE);
    expect(late?.text).toMatch(/^Daily balance digest \(late\)/);
    expect(visibleText(late)).toContain(NAMED);
    expect(next).toBeDefined();
    expect(namesPaid(next)).toBe(false);
  });
});
