import type { BlockAction, ButtonAction } from '@slack/bolt';
import { beforeEach, describe, expect, it } from 'vitest';
import { createShareInvoiceAction } from '../../src/listeners/actions/share-invoice.js';
import { actionListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { visibleText } from '../support/block-kit.js';
import { buttonArgs, captureLogs } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * Share in thread, past its first success: the link to the shared card as the click's workspace
 * allows one, what an operator reads of each failure (and of none, where a person is to invite
 * the bot), and the outcome each answer is logged with.
 */
const env = useSandbox();
const OPEN = DEMO_INVOICE_IDS.open;
const THREAD = '1700000000.000500';
const TITLE = 'Order #1042 — annual support plan';
let answers = 0;

beforeEach(async () => {
  await emptyWork(env.store);
});

/** One click of Share in thread on a fresh private answer in C0SUPPORT, its body changed by `edit`. */
async function share(value: string, edit: (body: BlockAction<ButtonAction>) => void = () => undefined) {
  const logs = captureLogs();
  const deps = env.deps({ logger: logs.logger });
  const { args, rec } = buttonArgs(value, { actionId: 'share_invoice:0' });
  const body = args.body as BlockAction<ButtonAction>;
  answers += 1;
  body.container = {
    type: 'message',
    message_ts: `1700000001.${String(answers).padStart(6, '0')}`,
    channel_id: 'C0SUPPORT',
  };
  edit(body);
  await actionListener(deps, 'share_invoice:0', createShareInvoiceAction(deps))(args);
  const response = rec.responses[0] as Record<string, unknown>;
  const problems = logs.lines.filter((l) => l.level === 'warn' || l.level === 'error');
  const request = logs.lines.find((l) => l.msg === 'action share_invoice:0');
  return { text: visibleText(response), response, problems, request };
}

const shareButtons = (response: unknown) => JSON.stringify(response).match(/"value":"[^"]+"/g) ?? [];

describe('Share in thread: the link to the shared card', () => {
  it('says where without a link when the click names no workspace domain', async () => {
    const { text, request } = await share(`${OPEN} ${THREAD}`, (body) => {
      Reflect.deleteProperty(body, 'team');
    });
    expect(text).toBe(
      `:white_check_mark: Shared *${TITLE}* in the thread, for everyone in the conversation to see.`,
    );
    expect(request).toMatchObject({ outcome: 'ok', invoiceId: OPEN });
  });

  it('makes no link of a domain that is not a workspace’s', async () => {
    const { text } = await share(`${OPEN} ${THREAD}`, (body) => {
      body.team = { id: 'T0HOME', domain: 'evil.example/x' };
    });
    expect(text).not.toContain('slack.com');
    expect(text).toContain(`*${TITLE}* in the thread,`);
  });

  it('links the card itself, with no thread, when the button names none', async () => {
    const { text } = await share(OPEN);
    const ts = env.poster.messages[0]?.ts ?? '';
    expect(text).toContain(
      `<https://home.slack.com/archives/C0SUPPORT/p${ts.replace('.', '')}|in the thread>`,
    );
  });
});

describe('Share in thread: what an operator reads when Slack takes nothing', () => {
  it('logs nothing where the bot is not in the channel: a person is to invite it', async () => {
    env.poster.closedChannels.add('C0SUPPORT');
    const { problems, request } = await share(`${OPEN} ${THREAD}`);
    expect(problems).toEqual([]);
    expect(request).toMatchObject({ outcome: 'not_in_channel' });
  });

  it('warns when Slack asks to slow down, and offers the card again as a new try', async () => {
    env.poster.failNext(new SlackPostError('rate_limited', 'ratelimited'));
    const { problems, request, response } = await share(`${OPEN} ${THREAD}`);
    expect(problems).toMatchObject([{ level: 'warn', msg: 'Slack did not take the message' }]);
    expect(request).toMatchObject({ outcome: 'slack_busy' });
    expect(shareButtons(response)).toContain(`"value":"${OPEN} ${THREAD} 1"`);
  });

  it('logs the error when Slack refuses the card, and offers no new try without a thread to post in', async () => {
    env.poster.failNext(new SlackPostError('refused', 'invalid_blocks'));
    const { problems, request, response, text } = await share(OPEN);
    expect(problems).toMatchObject([{ level: 'error', msg: 'request failed' }]);
    expect(request).toMatchObject({ outcome: 'internal_error' });
    expect(shareButtons(response)).toEqual([]);
    expect(text).not.toContain(TITLE);
  });

  it('logs an unexpected failure of the post as an error, and says something went wrong', async () => {
    env.poster.failNext(new TypeError('the poster broke') as SlackPostError);
    const { problems, request, response } = await share(`${OPEN} ${THREAD}`);
    expect(problems).toMatchObject([{ level: 'error', err: { message: 'the poster broke' } }]);
    expect(request).toMatchObject({ outcome: 'internal_error' });
    expect(shareButtons(response)).toEqual([]);
  });

  it('logs the outcome slack_busy when Slack does not answer', async () => {
    env.poster.failNext(new SlackPostError('transient', undefined));
    expect((await share(`${OPEN} ${THREAD}`)).request).toMatchObject({ outcome: 'slack_busy' });
  });

  it('takes each new try of one answer as its own share: the second new try posts once the bot is invited', async () => {
    const sameAnswer = (body: BlockAction<ButtonAction>) => {
      body.container = { type: 'message', message_ts: '1700000002.000100', channel_id: 'C0SUPPORT' };
    };
    env.poster.closedChannels.add('C0SUPPORT');
    await share(`${OPEN} ${THREAD}`, sameAnswer);
    const again = await share(`${OPEN} ${THREAD} 1`, sameAnswer);
    expect(again.request).toMatchObject({ outcome: 'not_in_channel' });
    expect(shareButtons(again.response)).toContain(`"value":"${OPEN} ${THREAD} 2"`);
    env.poster.closedChannels.delete('C0SUPPORT');
    expect((await share(`${OPEN} ${THREAD} 2`, sameAnswer)).request).toMatchObject({ outcome: 'ok' });
    expect(env.poster.repliesIn('C0SUPPORT', THREAD)).toHaveLength(1);
  });
});
