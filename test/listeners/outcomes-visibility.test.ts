import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createShareInvoiceAction } from '../../src/listeners/actions/share-invoice.js';
import { createStopWatchAction } from '../../src/listeners/actions/stop-watch.js';
import { createWatchInvoiceAction } from '../../src/listeners/actions/watch-invoice.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { FINANCE, useLoggedOutcomes } from '../support/logged-outcomes.js';

/**
 * Who sees each answer of a command or a button, next to the outcome its request log line
 * records: a refusal, an error or a confirmation is shown to the person who asked alone.
 */
const { env, command, click } = useLoggedOutcomes();
const { open: OPEN, expired: EXPIRED } = DEMO_INVOICE_IDS;

const shown = (reply: unknown) => (reply as { response_type?: string } | undefined)?.response_type;
const subscribed = () => command('/balance', 'subscribe', { channel_id: FINANCE });
const watched = () => command('/invoice', `watch ${OPEN}`);
const later = { clock: () => Date.now() + 30 * 24 * 3_600_000 };
const firstWatch = async () => (await env.deps().watches.list('C0SUPPORT'))[0]?.id ?? '';

/** Each command or click whose answer only the person who asked sees, and the outcome its log line records. */
const privateAnswers: [string, () => Promise<{ line: unknown; reply: unknown }>, string][] = [
  ['/balance help', () => command('/balance', 'help'), 'help'],
  [
    '/balance subscribe 25:00',
    () => command('/balance', 'subscribe 25:00', { channel_id: FINANCE }),
    'invalid_input',
  ],
  [
    '/balance subscribe out of sight',
    () => command('/balance', 'subscribe', { channel_id: 'G0UNSEEN' }),
    'not_in_channel',
  ],
  [
    '/balance subscribe twice',
    async () => {
      await subscribed();
      return subscribed();
    },
    'already_subscribed',
  ],
  [
    '/balance unsubscribe',
    async () => {
      await subscribed();
      return command('/balance', 'unsubscribe', { channel_id: FINANCE });
    },
    'ok',
  ],
  [
    '/balance unsubscribe from another workspace',
    () => command('/balance', 'unsubscribe', { channel_id: FINANCE, team_id: 'T0GUEST' }),
    'other_workspace',
  ],
  [
    '/invoice unwatch',
    async () => {
      await watched();
      return command('/invoice', `unwatch ${OPEN}`);
    },
    'ok',
  ],
  ['/invoice unwatch of nothing', () => command('/invoice', `unwatch ${OPEN}`), 'not_watched'],
  [
    '/invoice watch twice',
    async () => {
      await watched();
      return watched();
    },
    'already_watched',
  ],
  [
    '/invoice watch over the limit',
    () => command('/invoice', `watch ${OPEN}`, {}, { settings: { limitPerChannel: 0 } }),
    'watch_limit',
  ],
  [
    '/invoice watch of an invoice past its expiry',
    () => command('/invoice', `watch ${OPEN}`, {}, later),
    'invoice_expired',
  ],
  ['/invoice watch of an expired invoice', () => command('/invoice', `watch ${EXPIRED}`), 'invoice_final'],
  [
    'Stop',
    async () => {
      await watched();
      return click('stop_watch', createStopWatchAction, await firstWatch());
    },
    'ok',
  ],
  ['Stop of nothing', () => click('stop_watch', createStopWatchAction, randomUUID()), 'not_watched'],
  [
    'Share with a value that is no invoice id',
    () => click('share_invoice', createShareInvoiceAction, 'nonsense'),
    'stale_button',
  ],
  [
    'Share where the bot cannot post',
    () => {
      env.poster.failNext(new SlackPostError('not_in_channel', 'not_in_channel'));
      return click('share_invoice', createShareInvoiceAction, OPEN);
    },
    'not_in_channel',
  ],
];

describe('who sees each answer: a refusal, an error or a confirmation only the person who asked', () => {
  it.each(privateAnswers)('%s', async (_label, run, outcome) => {
    const { line, reply } = await run();
    expect(line).toMatchObject({ outcome });
    expect(shown(reply)).toBe('ephemeral');
  });

  it.each([
    ['Share', 'share_invoice', createShareInvoiceAction],
    ['Watch', 'watch_invoice', createWatchInvoiceAction],
  ])('%s that fails inside the bot still names the invoice in the log', async (_label, id, create) => {
    env.poster.failNext(new SlackPostError('refused', 'invalid_blocks'));
    const { line, reply } = await click(id, create, OPEN);
    expect(line).toMatchObject({ outcome: 'internal_error', invoiceId: OPEN });
    expect(shown(reply)).toBe('ephemeral');
  });
});
