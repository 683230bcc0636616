import type { BlockAction, ButtonAction } from '@slack/bolt';
import { beforeEach, describe, expect, it } from 'vitest';
import { createShareInvoiceAction } from '../../src/listeners/actions/share-invoice.js';
import { actionListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { buttonArgs, captureLogs } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * Issue 30, point 3: Share in thread posts once. The first click shares, and the private answer
 * is replaced by what happened, with a link to the shared card; a second click of that answer,
 * on this instance or another, posts nothing.
 */
const env = useSandbox();
const OPEN = DEMO_INVOICE_IDS.open;
/** The message the shortcut was used on, whose thread the card goes in. */
const THREAD = '1700000000.000500';
/** The shortcut's private answer, where the button is. */
const ANSWER = '1700000000.000900';
const TITLE = 'Order #1042 — annual support plan';

beforeEach(async () => {
  await emptyWork(env.store);
});

/**
 * A click of Share in thread on the shortcut's private answer `answer`, through the real
 * listener of a bot instance of its own (its own dependencies, the one shared store).
 */
async function clickShare(value = `${OPEN} ${THREAD}`, answer = ANSWER) {
  const logs = captureLogs();
  const deps = env.deps({ logger: logs.logger });
  const { args, rec } = buttonArgs(value, { actionId: 'share_invoice:0' });
  const body = args.body as BlockAction<ButtonAction>;
  Object.assign(body, {
    container: { type: 'message', message_ts: answer, channel_id: 'C0SUPPORT', is_ephemeral: true },
  });
  delete body.message;
  await actionListener(deps, 'share_invoice:0', createShareInvoiceAction(deps))(args);
  const [response] = rec.responses;
  expect(rec.responses).toHaveLength(1);
  expectValidMessage(response);
  return {
    response: response as Record<string, unknown>,
    outcome: logs.lines.find((l) => l.msg === 'action share_invoice:0')?.outcome,
  };
}

const shared = () => env.poster.repliesIn('C0SUPPORT', THREAD);
const buttons = (message: unknown) => JSON.stringify(message).match(/"action_id":"[^"]+"/g) ?? [];

describe('Share in thread', () => {
  it('posts the card, then replaces the private answer with a link to it; a second click posts nothing', async () => {
    const first = await clickShare();
    expect(first.outcome).toBe('ok');
    expect(shared()).toHaveLength(1);
    expect(visibleText(shared()[0])).toMatch(/shared <!date\^\d+\^[^>]+> by <@U0CLICKER>/);
    const ts = shared()[0]?.ts ?? '';
    expect(first.response).toMatchObject({ replace_original: true });
    expect(visibleText(first.response)).toBe(
      `:white_check_mark: Shared *${TITLE}* <https://home.slack.com/archives/C0SUPPORT/p${ts.replace('.', '')}?thread_ts=${THREAD}&amp;cid=C0SUPPORT|in the thread>, for everyone in the conversation to see.`,
    );
    expect(buttons(first.response)).toEqual([]);

    const second = await clickShare();
    expect(second.outcome).toBe('duplicate');
    expect(shared()).toHaveLength(1);
    expect(second.response).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(visibleText(second.response)).toBe(
      '*Share in thread* was clicked already on that answer, so I posted nothing more: its result replaces the answer.',
    );

    // The shortcut used again gives a new answer, whose Share in thread shares again.
    expect((await clickShare(`${OPEN} ${THREAD}`, '1700000000.000950')).outcome).toBe('ok');
    expect(shared()).toHaveLength(2);
  });

  it('posts once when the answer is clicked twice at the same moment, on two instances', async () => {
    const outcomes = (await Promise.all([clickShare(), clickShare()])).map((c) => c.outcome).sort();
    expect(outcomes).toEqual(['duplicate', 'ok']);
    expect(env.poster.calls).toEqual([`post C0SUPPORT thread ${THREAD}`]);
  });

  it('where the bot cannot post: says so, offers the card again, and that card shares once the bot is invited', async () => {
    env.poster.closedChannels.add('C0SUPPORT');
    const refused = await clickShare();
    expect(refused.outcome).toBe('not_in_channel');
    expect(refused.response).toMatchObject({ replace_original: true });
    const text = visibleText(refused.response);
    expect(text).toContain(
      ':warning: I cannot post in <#C0SUPPORT>, so nothing was shared. Invite me first with `/invite @Crypto Payments`, then click *Share in thread* again.',
    );
    expect(text).toContain(`*${TITLE}*`);
    expect(JSON.stringify(refused.response)).toContain(`"value":"${OPEN} ${THREAD} 1"`);

    env.poster.closedChannels.delete('C0SUPPORT');
    // The first answer's button was used: a late click of it still posts nothing.
    expect((await clickShare()).outcome).toBe('duplicate');
    expect((await clickShare(`${OPEN} ${THREAD} 1`)).outcome).toBe('ok');
    expect((await clickShare(`${OPEN} ${THREAD} 1`)).outcome).toBe('duplicate');
    expect(shared()).toHaveLength(1);
  });

  it('when Slack does not answer, says the card may be there, and offers no second try that could post it twice', async () => {
    env.poster.failNext(new SlackPostError('transient', undefined));
    const unanswered = await clickShare();
    expect(unanswered.outcome).toBe('slack_busy');
    expect(unanswered.response).toMatchObject({ replace_original: true });
    expect(visibleText(unanswered.response)).toBe(
      `:warning: Slack did not answer in time when I shared *${TITLE}* in the thread. If the card is not there within a minute, use *Check payment status* on the message again.`,
    );
    expect(buttons(unanswered.response)).toEqual([]);
    expect((await clickShare()).outcome).toBe('duplicate');
    expect(env.poster.calls).toEqual([`post C0SUPPORT thread ${THREAD}`]);
  });

  it('when the service cannot read the invoice, leaves the answer and its button as they were: a later click shares, once', async () => {
    // Every try of the one call (it is retried twice) fails.
    env.sandbox.failNext({ kind: 'status', status: 503 }, 3);
    const failed = await clickShare();
    expect(failed.outcome).toBe('service_unavailable');
    expect(failed.response).toMatchObject({ replace_original: false });
    expect(env.poster.calls).toEqual([]);
    expect((await clickShare()).outcome).toBe('ok');
    expect((await clickShare()).outcome).toBe('duplicate');
    expect(shared()).toHaveLength(1);
  });
});
