import { describe, expect, it } from 'vitest';
import { createRefreshInvoiceAction } from '../../src/listeners/actions/refresh-invoice.js';
import { createShareInvoiceAction } from '../../src/listeners/actions/share-invoice.js';
import { createStopWatchAction } from '../../src/listeners/actions/stop-watch.js';
import { createWatchInvoiceAction } from '../../src/listeners/actions/watch-invoice.js';
import { actionListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { visibleText } from '../support/block-kit.js';
import { buttonArgs } from '../support/bolt.js';
import { useLoggedOutcomes } from '../support/logged-outcomes.js';

/**
 * The one request log line records what each click of Watch, Refresh, Stop and Share in thread
 * came to, as an operator reading the logs or the metrics would see it.
 */
const { env, logged, command, click } = useLoggedOutcomes();
const { open: OPEN } = DEMO_INVOICE_IDS;

describe('buttons: one outcome per answer', () => {
  const watchValue = `${OPEN} 1700000000.000200`;

  it('Watch on a card in a thread: the live card goes in that thread', async () => {
    const { line } = await click('watch_invoice', createWatchInvoiceAction, OPEN, (body) => {
      body.message = {
        type: 'message',
        ts: '1700000000.000100',
        thread_ts: '1700000000.000001',
        text: 'x',
      } as never;
      body.container = { type: 'message' } as never;
    });
    expect(line).toMatchObject({ outcome: 'ok', invoiceId: OPEN, team: 'T0HOME' });
    expect(env.poster.messages[0]?.threadTs).toBe('1700000000.000001');
  });

  it('Watch from the shortcut’s answer: the thread it names, in the channel of the container', async () => {
    const { line } = await click('watch_invoice', createWatchInvoiceAction, watchValue, (body) => {
      body.channel = undefined as never;
      body.container = { type: 'message', channel_id: 'C0CONTAINER', is_ephemeral: true } as never;
    });
    expect(line).toMatchObject({ outcome: 'ok' });
    expect(env.poster.messages[0]).toMatchObject({ channel: 'C0CONTAINER', threadTs: '1700000000.000200' });
  });

  it('Watch with the team only in the body', async () => {
    const { line } = await click('watch_invoice', createWatchInvoiceAction, OPEN, (body) => {
      body.user = { id: 'U0CLICKER', username: 'clicker' } as never;
    });
    expect(line).toMatchObject({ outcome: 'ok' });
  });

  it.each([
    ['a value that is no invoice id', 'nonsense', () => undefined],
    ['no channel to watch in', OPEN, (body: { channel?: unknown }) => (body.channel = undefined)],
  ])('Watch with %s: stale_button', async (_label, value, shape) => {
    const { line, reply } = await click('watch_invoice', createWatchInvoiceAction, value, shape as never);
    expect(line).toMatchObject({ outcome: 'stale_button' });
    expect(reply?.response_type).toBe('ephemeral');
  });

  it('Refresh: ok, naming the invoice', async () => {
    const { line, reply } = await click('refresh_invoice', createRefreshInvoiceAction, OPEN);
    expect(line).toMatchObject({ outcome: 'ok', invoiceId: OPEN });
    expect(reply).toMatchObject({ replace_original: true });
  });

  it('Stop on a live card, then again: ok, then not_watched', async () => {
    await command('/invoice', `watch ${OPEN}`);
    const [watch] = await env.deps().watches.list('C0SUPPORT');
    const first = await click('stop_watch', createStopWatchAction, watch?.id ?? '');
    expect(first.line).toMatchObject({ outcome: 'ok' });
    expect(first.reply).toMatchObject({ replace_original: false });
    const second = await click('stop_watch', createStopWatchAction, watch?.id ?? '');
    expect(second.line).toMatchObject({ outcome: 'not_watched' });
    expect(visibleText(second.reply)).toContain('not watched');
  });

  it('Stop in the private list refreshes the list in place, outcome by outcome', async () => {
    await command('/invoice', `watch ${OPEN}`);
    const [watch] = await env.deps().watches.list('C0SUPPORT');
    const inList = (body: { channel?: unknown; container: unknown }) => {
      body.channel = undefined;
      body.container = { type: 'message', channel_id: 'C0SUPPORT', is_ephemeral: true };
    };
    const first = await click('stop_watch', createStopWatchAction, watch?.id ?? '', inList as never);
    expect(first.line).toMatchObject({ outcome: 'ok' });
    expect(first.reply).toMatchObject({ replace_original: true });
    const second = await click('stop_watch', createStopWatchAction, watch?.id ?? '', inList as never);
    expect(second.line).toMatchObject({ outcome: 'not_watched' });
  });

  it('Stop in the App Home (no response_url) ends the watch and publishes the Home again without it', async () => {
    await command('/invoice', `watch ${OPEN}`, { user_id: 'U0CLICKER' });
    const [watch] = await env.deps().watches.list('C0SUPPORT');
    const { deps, line } = logged();
    const { args, rec } = buttonArgs(watch?.id ?? '', { actionId: 'stop_watch:0' });
    const home = args.body as {
      channel?: unknown;
      container: unknown;
      message?: unknown;
      response_url?: unknown;
    };
    home.channel = undefined;
    home.message = undefined;
    home.response_url = undefined;
    home.container = { type: 'view', view_id: 'V0HOME' };
    await actionListener(deps, 'stop_watch', createStopWatchAction(deps))(args);
    expect(line('action stop_watch')).toMatchObject({ outcome: 'ok', delivery: 'view' });
    expect(await env.deps().watches.list('C0SUPPORT')).toEqual([]);
    expect(rec.responses).toEqual([]);
    expect(rec.published).toHaveLength(1);
    expect(rec.published[0]?.user_id).toBe('U0CLICKER');
    expect(JSON.stringify(rec.published[0]?.view)).not.toContain('stop_watch');
  });

  /** A click on the shortcut's private answer number `n`: each answer's Share in thread shares once. */
  const onAnswer = (n: number) => (body: { container: unknown }) => {
    body.container = { type: 'message', message_ts: `1700000000.00090${n}`, is_ephemeral: true };
  };

  it('Share in thread: ok; not_in_channel where the bot is not; stale_button without a channel', async () => {
    expect(
      (await click('share_invoice', createShareInvoiceAction, watchValue, onAnswer(1))).line,
    ).toMatchObject({
      outcome: 'ok',
      invoiceId: OPEN,
    });
    env.poster.failNext(new SlackPostError('not_in_channel', 'not_in_channel'));
    const closed = await click('share_invoice', createShareInvoiceAction, watchValue, onAnswer(2));
    expect(closed.line).toMatchObject({ outcome: 'not_in_channel', invoiceId: OPEN });
    expect(visibleText(closed.reply)).toContain('Invite me first');
    env.poster.failNext(new SlackPostError('refused', 'invalid_blocks'));
    expect(
      (await click('share_invoice', createShareInvoiceAction, watchValue, onAnswer(3))).line,
    ).toMatchObject({
      outcome: 'internal_error',
    });
    const nowhere = await click('share_invoice', createShareInvoiceAction, watchValue, (body) => {
      body.channel = undefined as never;
    });
    expect(nowhere.line).toMatchObject({ outcome: 'stale_button' });
    expect(
      (await click('share_invoice', createShareInvoiceAction, watchValue, onAnswer(1))).line,
    ).toMatchObject({
      outcome: 'duplicate',
    });
  });

  it('Share in thread while Slack is busy: slack_busy, told what happened', async () => {
    env.poster.failNext(new SlackPostError('rate_limited', undefined));
    const limited = await click('share_invoice', createShareInvoiceAction, watchValue, onAnswer(1));
    expect(limited.line).toMatchObject({ outcome: 'slack_busy', invoiceId: OPEN });
    expect(visibleText(limited.reply)).toContain(
      ':warning: *Slack did not take the message*\nSlack asked the bot to slow down or did not answer, so nothing was posted. Try again in a minute.',
    );
    env.poster.failNext(new SlackPostError('transient', undefined));
    const unanswered = await click('share_invoice', createShareInvoiceAction, watchValue, onAnswer(2));
    expect(unanswered.line).toMatchObject({ outcome: 'slack_busy', invoiceId: OPEN });
    expect(visibleText(unanswered.reply)).toContain('Slack did not answer in time when I shared');
  });
});
