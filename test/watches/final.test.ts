import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import type { StartRequest } from '../../src/watches/service.js';
import { visibleText } from '../support/block-kit.js';
import { HOME_TEAM, TEST_WATCH_SETTINGS } from '../support/bolt.js';
import { invoice, NOW } from '../support/factories.js';
import { latest } from '../support/fake-slack.js';
import { useWatchWorld } from '../support/watch-world.js';

/**
 * A watch ends once its invoice can no longer change as far as the bot can know: when it no longer
 * awaits payment (the rule the cards word it by, `awaitsPayment`), or its expiry and the grace
 * have passed. It is then offered nowhere.
 */
const world = useWatchWorld();
const { env, clock } = world;
const { open: OPEN, paid: PAID } = DEMO_INVOICE_IDS;
const CHANNEL = 'C0SUPPORT';
const MINUTE = 60_000;

const instance = () => world.instance();

const request = (invoiceId = OPEN): StartRequest => ({
  teamId: HOME_TEAM,
  channelId: CHANNEL,
  userId: 'U0WATCHER',
  invoiceId,
});

describe('a watch whose invoice no longer awaits payment', () => {
  it.each([
    [
      'paid and closed',
      { payStatus: 'paid', status: 'closed' },
      '• *Status*: Open → Closed\n• *Payment*: Not paid → Paid',
    ],
    ['paid, the status not yet changed', { payStatus: 'paid' }, '• *Payment*: Not paid → Paid'],
    ['marked expired by the service', { status: 'expired' }, '• *Status*: Open → Expired'],
  ])(
    '%s: ends at that check, with the change and that it ended in one reply, and leaves every list',
    async (_label, patch, change) => {
      const { watches, tick } = instance();
      await watches.start(request());
      const [card] = world.poster.repliesIn(CHANNEL);
      if (!card) throw new Error('no live card');
      env.sandbox.updateInvoice(OPEN, patch);
      clock.now += 31_000;
      // The card's edit and one thread reply: one event, one notification for the watcher.
      expect((await tick()).map((r) => r.outcome)).toEqual(['changed', 'sent', 'sent']);

      const thread = world.poster.repliesIn(CHANNEL, card.ts).map((m) => visibleText(m));
      expect(thread).toEqual([
        expect.stringContaining(
          `${change}\nNo longer watching *Order #1042 — annual support plan*: it no longer awaits payment, so nothing more is expected to change.\nInvoice \``,
        ),
      ]);
      expect(thread[0]?.match(/<@U0WATCHER>/g)).toHaveLength(1);
      const shown = latest(card);
      expect(visibleText(shown)).toContain(
        'No longer watched since <!date^1795262431^{date_short_pretty} at {time}|2026-11-21T12:00:31Z>: it no longer awaits payment',
      );
      expect(JSON.stringify(shown.blocks)).not.toContain('stop_watch');
      // Gone from `/invoice watching` and from the watcher's App Home at once, not a day later.
      expect(await watches.list(CHANNEL)).toEqual([]);
      expect(await watches.startedBy(HOME_TEAM, 'U0WATCHER')).toEqual([]);
      // And never read again.
      const reads = env.sandbox.requests.length;
      clock.now += 60 * MINUTE;
      expect(await tick()).toEqual([]);
      expect(env.sandbox.requests).toHaveLength(reads);
      expect(world.poster.problems).toEqual([]);
    },
  );

  it('goes on while part of it is paid: it still awaits the rest', async () => {
    const { watches, tick } = instance();
    await watches.start(request());
    env.sandbox.updateInvoice(OPEN, { payStatus: 'partially_paid' });
    clock.now += 31_000;
    expect((await tick()).map((r) => r.outcome)).toEqual(['changed', 'sent', 'sent']);
    expect(await watches.list(CHANNEL)).toHaveLength(1);
  });

  it('goes on through a status never seen: told as a change, and the payment after it is told and ends it', async () => {
    const { watches, tick } = instance();
    await watches.start(request());
    const [card] = world.poster.repliesIn(CHANNEL);
    if (!card) throw new Error('no live card');
    env.sandbox.updateInvoice(OPEN, { status: 'processing' });
    clock.now += 31_000;
    expect((await tick()).map((r) => r.outcome)).toEqual(['changed', 'sent', 'sent']);
    expect(await watches.list(CHANNEL)).toHaveLength(1);
    expect(visibleText(latest(card))).toContain('Stop watching');

    env.sandbox.updateInvoice(OPEN, { status: 'closed', payStatus: 'paid' });
    clock.now += 31_000;
    expect((await tick()).map((r) => r.outcome)).toEqual(['changed', 'sent', 'sent']);
    const thread = world.poster.repliesIn(CHANNEL, card.ts).map((m) => visibleText(m));
    expect(thread).toEqual([
      expect.stringContaining('• *Status*: Open → Processing\nInvoice'),
      expect.stringContaining(
        '• *Status*: Processing → Closed\n• *Payment*: Not paid → Paid\nNo longer watching *Order #1042 — annual support plan*: it no longer awaits payment',
      ),
    ]);
    expect(await watches.list(CHANNEL)).toEqual([]);
  });

  it('is not started for an invoice that no longer awaits payment, whatever its expiry: nothing posted or kept', async () => {
    env.sandbox.updateInvoice(PAID, { timeout: '2099-01-01T00:00:00.000Z' });
    const { watches } = instance();
    expect(await watches.start(request(PAID))).toMatchObject({ kind: 'final' });
    expect(world.poster.calls).toEqual([]);
    expect(await env.store.db.selectFrom('watches').selectAll().execute()).toEqual([]);
  });
});

describe('whether Watch is offered', () => {
  const grace = TEST_WATCH_SETTINGS.graceMinutes * MINUTE;

  it.each([
    ['an open invoice before its expiry', invoice(), true],
    [
      'one past its expiry, within the grace for a late payment',
      invoice({ timeout: new Date(NOW.getTime() - grace + MINUTE) }),
      true,
    ],
    ['one past its expiry and the grace', invoice({ timeout: new Date(NOW.getTime() - grace) }), false],
    ['a paid and closed one', invoice({ status: 'closed', payStatus: 'paid' }), false],
    ['an expired one', invoice({ status: 'expired' }), false],
    ['one partly paid', invoice({ payStatus: 'partially_paid' }), true],
    ['one in a status never seen', invoice({ status: 'processing' }), true],
  ])('%s: %s', (_label, shown, offered) => {
    expect(instance().watches.watchable(shown)).toBe(offered);
  });
});
