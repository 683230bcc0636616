import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ButtonHandler } from '../../src/listeners/actions/click.js';
import { createRefreshInvoiceAction } from '../../src/listeners/actions/refresh-invoice.js';
import { createShareInvoiceAction } from '../../src/listeners/actions/share-invoice.js';
import { createStopWatchAction } from '../../src/listeners/actions/stop-watch.js';
import { createWatchInvoiceAction } from '../../src/listeners/actions/watch-invoice.js';
import { createBalanceCommand } from '../../src/listeners/commands/balance.js';
import { createInvoiceCommand } from '../../src/listeners/commands/invoice.js';
import type { ListenerDeps } from '../../src/listeners/deps.js';
import { actionListener, commandListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { visibleText } from '../support/block-kit.js';
import { buttonArgs, captureLogs, commandArgs, type DepsOptions } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * The one request log line records what each path came to (issue 8: "the request log line's
 * outcome for each path"), as an operator reading the logs or the metrics would see it.
 */
const env = useSandbox();
const { open: OPEN, expired: EXPIRED } = DEMO_INVOICE_IDS;
const FINANCE = 'G0FINANCE';

beforeEach(async () => {
  await emptyWork(env.store);
  env.poster.conversations.set(FINANCE, { isPrivate: true, isDirect: false, isShared: false });
});

function logged(opts: DepsOptions = {}) {
  const logs = captureLogs();
  const deps = env.deps({ ...opts, logger: logs.logger });
  const line = (msg: string) => logs.lines.find((l) => l.msg === msg);
  return { deps, logs, line };
}

async function command(
  name: '/invoice' | '/balance',
  text: string,
  overrides: Record<string, string> = {},
  opts: DepsOptions = {},
) {
  const { deps, line } = logged(opts);
  const handler = name === '/invoice' ? createInvoiceCommand(deps) : createBalanceCommand(deps);
  const { args, rec } = commandArgs({ command: name, text, ...overrides });
  await commandListener(deps, name, handler)(args);
  return { line: line(`command ${name}`), reply: rec.acks[0] ?? rec.responses[0] };
}

type Action = (deps: ListenerDeps) => ButtonHandler;

async function click(
  actionId: string,
  create: Action,
  value: string,
  shape: (body: ReturnType<typeof buttonArgs>['args']['body']) => void = () => undefined,
  opts: DepsOptions = {},
) {
  const { deps, line } = logged(opts);
  const { args, rec } = buttonArgs(value, { actionId });
  shape(args.body);
  await actionListener(deps, actionId, create(deps))(args);
  return {
    line: line(`action ${actionId}`),
    reply: rec.responses.at(-1) as Record<string, unknown> | undefined,
  };
}

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

describe('who sees each answer: a refusal, an error or a confirmation only the person who asked', () => {
  const shown = (reply: unknown) => (reply as { response_type?: string } | undefined)?.response_type;
  const subscribed = () => command('/balance', 'subscribe', { channel_id: FINANCE });
  const watched = () => command('/invoice', `watch ${OPEN}`);
  const later = { clock: () => Date.now() + 30 * 24 * 3_600_000 };
  const firstWatch = async () => (await env.deps().watches.list('C0SUPPORT'))[0]?.id ?? '';

  it.each([
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
  ])('%s', async (_label, run, outcome) => {
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
