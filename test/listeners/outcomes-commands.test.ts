import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { FINANCE, useLoggedOutcomes } from '../support/logged-outcomes.js';

/**
 * The one request log line records what each path of `/invoice watch` and `/balance subscribe`
 * came to, as an operator reading the logs or the metrics would see it.
 */
const { env, command } = useLoggedOutcomes();
const { open: OPEN, expired: EXPIRED } = DEMO_INVOICE_IDS;

describe('/invoice watch: one outcome per answer', () => {
  it.each([
    ['a new watch', `watch ${OPEN}`, {}, 'ok'],
    ['a channel the bot cannot post in', `watch ${OPEN}`, { channel_id: 'C0CLOSED' }, 'not_in_channel'],
    ['someone from another workspace', `watch ${OPEN}`, { team_id: 'T0GUEST' }, 'other_workspace'],
  ])('%s', async (_label, text, overrides, outcome) => {
    env.poster.closedChannels.add('C0CLOSED');
    const { line, reply } = await command('/invoice', text, overrides);
    expect(line).toMatchObject({ outcome, kind: 'command', name: '/invoice' });
    expect((reply as { response_type?: string }).response_type).toBe('ephemeral');
  });

  it('unwatch: ok, then not_watched, each naming the invoice', async () => {
    await command('/invoice', `watch ${OPEN}`);
    expect((await command('/invoice', `unwatch ${OPEN}`)).line).toMatchObject({
      outcome: 'ok',
      invoiceId: OPEN,
    });
    expect((await command('/invoice', `unwatch ${OPEN}`)).line).toMatchObject({
      outcome: 'not_watched',
      invoiceId: OPEN,
    });
  });

  it('an invoice that can no longer be paid', async () => {
    const later = { clock: () => Date.now() + 30 * 24 * 3_600_000 };
    expect((await command('/invoice', `watch ${OPEN}`, {}, later)).line).toMatchObject({
      outcome: 'invoice_expired',
      invoiceId: OPEN,
    });
    // One the service no longer has awaiting payment, whatever the time.
    expect((await command('/invoice', `watch ${EXPIRED}`)).line).toMatchObject({
      outcome: 'invoice_final',
      invoiceId: EXPIRED,
    });
  });

  it('a second watch of the same invoice, and one over the channel’s limit', async () => {
    await command('/invoice', `watch ${OPEN}`);
    expect((await command('/invoice', `watch ${OPEN}`)).line).toMatchObject({
      outcome: 'already_watched',
      invoiceId: OPEN,
    });
    const over = await command(
      '/invoice',
      `watch ${DEMO_INVOICE_IDS.paid}`,
      {},
      { settings: { limitPerChannel: 1 } },
    );
    expect(over.line).toMatchObject({ outcome: 'watch_limit', invoiceId: DEMO_INVOICE_IDS.paid });
    expect(visibleText(over.reply)).toContain('1');
  });
});

describe('/balance subscribe: one outcome per answer', () => {
  it.each([
    ['help', 'help', {}, 'help'],
    ['a subscription', 'subscribe', { channel_id: FINANCE }, 'ok'],
    ['a time it cannot read', 'subscribe 25:00', { channel_id: FINANCE }, 'invalid_input'],
    ['a channel the bot cannot see', 'subscribe', { channel_id: 'G0UNSEEN' }, 'not_in_channel'],
  ])('%s', async (_label, text, overrides, outcome) => {
    const { line } = await command('/balance', text, overrides);
    expect(line).toMatchObject({ outcome });
  });

  it.each([
    ['an unknown word', 'nonsense', {}, 'usage'],
    [
      'a subscription from another workspace',
      'subscribe',
      { channel_id: FINANCE, team_id: 'T0GUEST' },
      'other_workspace',
    ],
    ['an unsubscribe where there is no feed', 'unsubscribe', { channel_id: FINANCE }, 'not_subscribed'],
    ['the list of feeds', 'SUBSCRIPTIONS', {}, 'ok'],
  ])('%s', async (_label, text, overrides, outcome) => {
    const { line, reply } = await command('/balance', text, overrides);
    expect(line).toMatchObject({ outcome });
    expect((reply as { response_type?: string }).response_type).toBe('ephemeral');
  });

  it('an unsubscribe that ends a feed', async () => {
    await command('/balance', 'subscribe', { channel_id: FINANCE });
    const { line, reply } = await command('/balance', 'unsubscribe', { channel_id: FINANCE });
    expect(line).toMatchObject({ outcome: 'ok' });
    expect(visibleText(reply)).toContain('off');
  });

  it('a channel that has the feed already', async () => {
    await command('/balance', 'subscribe', { channel_id: FINANCE });
    const again = await command('/balance', '  subscribe  ', { channel_id: FINANCE });
    expect(again.line).toMatchObject({ outcome: 'already_subscribed' });
    expect(visibleText(again.reply)).toContain('09:00 UTC');
    // With a time, its digest moves there.
    const moved = await command('/balance', '  subscribe   08:30 ', { channel_id: FINANCE });
    expect(moved.line).toMatchObject({ outcome: 'ok' });
  });
});
