import { randomUUID } from 'node:crypto';
import type { BlockAction, ButtonAction } from '@slack/bolt';
import { beforeEach, describe, expect, it } from 'vitest';
import { createStopWatchAction } from '../../src/listeners/actions/stop-watch.js';
import { createWatchInvoiceAction } from '../../src/listeners/actions/watch-invoice.js';
import { createInvoiceCommand } from '../../src/listeners/commands/invoice.js';
import { commandListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { buttonArgs, commandArgs } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { useSandbox } from '../support/use-sandbox.js';

const env = useSandbox();
const OPEN = DEMO_INVOICE_IDS.open;

beforeEach(async () => {
  await emptyWork(env.store);
});

async function invoiceCommand(text: string, overrides: Record<string, string> = {}) {
  const deps = env.deps();
  const { args, rec } = commandArgs({ command: '/invoice', text, ...overrides });
  await commandListener(deps, '/invoice', createInvoiceCommand(deps))(args);
  const reply = rec.acks[0] ?? rec.responses[0];
  expectValidMessage(reply);
  return reply as { response_type: string };
}

describe('/invoice watch', () => {
  it('posts the live card in the channel and answers privately, in a few words', async () => {
    const reply = await invoiceCommand(`watch ${OPEN}`);
    expect(reply.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toBe(
      'Watching *Order #1042 — annual support plan*: its live card is in this channel. I will update the card and reply in its thread when the invoice changes.',
    );
    expect(env.poster.calls).toEqual(['post C0SUPPORT']);
  });

  it('takes a pasted payment link, as /invoice does', async () => {
    await invoiceCommand(`watch <${env.sandbox.payUrl}/pay/${OPEN}|pay>`);
    expect(env.poster.messages).toHaveLength(1);
  });

  it('says when it is watched already, without a second card', async () => {
    await invoiceCommand(`watch ${OPEN}`);
    expect(visibleText(await invoiceCommand(`watch ${OPEN}`))).toContain(
      'is already watched in this channel',
    );
    expect(env.poster.messages).toHaveLength(1);
  });

  it('asks to invite the bot where it cannot post, and stores nothing', async () => {
    env.poster.closedChannels.add('C0PRIVATE');
    const reply = await invoiceCommand(`watch ${OPEN}`, { channel_id: 'C0PRIVATE' });
    expect(visibleText(reply)).toContain('I cannot post in <#C0PRIVATE>. Invite me first');
    expect(await env.deps().watches.list('C0PRIVATE')).toEqual([]);
  });

  it('says "nothing was posted" only when Slack refused the card; when it did not answer, that the card may yet appear', async () => {
    env.poster.failNext(new SlackPostError('rate_limited', 'ratelimited', 1000));
    expect(visibleText(await invoiceCommand(`watch ${OPEN}`))).toContain('so nothing was posted');
    expect(env.poster.messages).toEqual([]);

    // No answer to the post, nor to the look for the card: it may have been posted.
    env.poster.failNext(new SlackPostError('transient', undefined), 2);
    const unanswered = visibleText(await invoiceCommand(`watch ${OPEN}`));
    expect(unanswered).toContain(
      'Slack did not answer in time when I posted the live card of *Order #1042 — annual support plan*. If the card appears in this channel, the invoice is watched',
    );
    expect(unanswered).not.toContain('nothing was posted');
    expect(visibleText(await invoiceCommand(`watch ${OPEN}`))).toContain(
      'but Slack has not confirmed its live card yet',
    );
    expect(env.poster.calls.filter((c) => c.startsWith('post'))).toHaveLength(2);
  });

  it('refuses someone from another organisation before calling anything', async () => {
    const reply = await invoiceCommand(`watch ${OPEN}`, { team_id: 'T0GUEST' });
    expect(visibleText(reply)).toContain('Watches are only for members of this workspace');
    expect(env.sandbox.requests).toHaveLength(0);
    expect(env.poster.calls).toEqual([]);
  });

  it.each([
    ['watch', 'Give an invoice id or paste a payment link, for example `/invoice watch'],
    ['watch nonsense', '`nonsense` is not an invoice id'],
  ])('answers "%s" with guidance, calling nothing', async (text, phrase) => {
    expect(visibleText(await invoiceCommand(text))).toContain(phrase);
    expect(env.sandbox.requests).toHaveLength(0);
  });
});

describe('/invoice watching and unwatch', () => {
  it('lists the channel’s watches privately, each with Stop', async () => {
    await invoiceCommand(`watch ${OPEN}`);
    const list = await invoiceCommand('watching');
    expect(list.response_type).toBe('ephemeral');
    expect(visibleText(list)).toContain('*Order #1042 — annual support plan*\nOpen · Not paid');
    expect(JSON.stringify(list)).toContain('"action_id":"stop_watch:0"');
  });

  it('stops a watch by id or link, and says when there was none', async () => {
    await invoiceCommand(`watch ${OPEN}`);
    expect(visibleText(await invoiceCommand(`unwatch ${OPEN.toUpperCase()}`))).toBe(
      'Stopped watching *Order #1042 — annual support plan*.',
    );
    expect(visibleText(await invoiceCommand(`unwatch ${OPEN}`))).toBe(
      'That invoice is not watched in this channel (any more).',
    );
  });
});

describe('the Watch button', () => {
  const click = (container: Record<string, unknown>, message?: Record<string, unknown>) => {
    const { args, rec } = buttonArgs(OPEN, { actionId: 'watch_invoice' });
    const body = args.body as BlockAction<ButtonAction>;
    Object.assign(body, { container: { type: 'message', channel_id: 'C0SUPPORT', ...container } });
    if (message) Object.assign(body, { message });
    return { args, rec };
  };

  it('puts the live card in the clicked card’s thread and tells only the clicker', async () => {
    const { args, rec } = click(
      { message_ts: '1700000000.000100' },
      { type: 'message', ts: '1700000000.000100', text: 'x' },
    );
    expect(await createWatchInvoiceAction(env.deps())(args)).toMatchObject({
      outcome: 'ok',
      invoiceId: OPEN,
    });
    expect(env.poster.calls).toEqual(['post C0SUPPORT thread 1700000000.000100']);
    expect(rec.responses[0]).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(visibleText(rec.responses[0])).toContain('in the thread of the card you clicked');
  });

  it('uses the thread a card already sits in', async () => {
    const { args } = click(
      { message_ts: '1700000000.000300' },
      { type: 'message', ts: '1700000000.000300', thread_ts: '1700000000.000001', text: 'x' },
    );
    await createWatchInvoiceAction(env.deps())(args);
    expect(env.poster.calls).toEqual(['post C0SUPPORT thread 1700000000.000001']);
  });

  it('posts in the channel when the card was ephemeral (it has no thread)', async () => {
    const { args } = click({ message_ts: '1700000000.000100', is_ephemeral: true });
    await createWatchInvoiceAction(env.deps())(args);
    expect(env.poster.calls).toEqual(['post C0SUPPORT']);
  });

  it('answers a value it did not write with a way to a fresh card, calling nothing', async () => {
    const { args, rec } = buttonArgs('../balance', { actionId: 'watch_invoice' });
    expect(await createWatchInvoiceAction(env.deps())(args)).toMatchObject({ outcome: 'stale_button' });
    expect(visibleText(rec.responses[0])).toContain('That button no longer works');
    expect(env.poster.calls).toEqual([]);
  });
});

describe('the Stop button', () => {
  it('on the live card: ends the watch and tells the clicker privately', async () => {
    await invoiceCommand(`watch ${OPEN}`);
    const [watch] = await env.deps().watches.list('C0SUPPORT');
    const { args, rec } = buttonArgs(watch?.id ?? '', { actionId: 'stop_watch' });
    expect(await createStopWatchAction(env.deps())(args)).toMatchObject({
      outcome: 'ok',
      delivery: 'response_url',
    });
    expect(rec.responses[0]).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(visibleText(rec.responses[0])).toBe('Stopped watching *Order #1042 — annual support plan*.');
    expect(await env.deps().watches.list('C0SUPPORT')).toEqual([]);
  });

  it('in the private list: refreshes the list in place', async () => {
    await invoiceCommand(`watch ${OPEN}`);
    const [watch] = await env.deps().watches.list('C0SUPPORT');
    const { args, rec } = buttonArgs(watch?.id ?? '', { actionId: 'stop_watch:0' });
    Object.assign(args.body, { container: { type: 'message', is_ephemeral: true, channel_id: 'C0SUPPORT' } });
    await createStopWatchAction(env.deps())(args);
    expect(rec.responses[0]).toMatchObject({ replace_original: true });
    expect(visibleText(rec.responses[0])).toContain('Nothing is watched in <#C0SUPPORT>');
  });

  it('says so when the watch had already ended', async () => {
    const { args, rec } = buttonArgs(randomUUID(), { actionId: 'stop_watch' });
    expect(await createStopWatchAction(env.deps())(args)).toMatchObject({ outcome: 'not_watched' });
    expect(visibleText(rec.responses[0])).toContain('not watched in this channel');
  });
});
