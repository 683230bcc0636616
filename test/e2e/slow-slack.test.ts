import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { type Stack, startStack, until, watchInvoice } from './harness.js';

/**
 * A slow Slack, end to end: the started bot posts a watch's thread reply to a Slack that takes
 * it but answers only after 40 s, longer than the outbox's 30 s lease.
 */

const OPEN = DEMO_INVOICE_IDS.open;

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('a slow Slack', () => {
  it('that answers a thread reply after 40 s gets it once', async () => {
    stack = await startStack({ env: { WATCH_POLL_SECONDS: '1' } });
    const { slack, sandbox, bot } = stack;
    await watchInvoice(bot, slack, OPEN);
    const [card] = slack.repliesIn('C0SUPPORT');
    if (!card) throw new Error('no live card');
    slack.answerLate('chat.postMessage', 40_000);
    sandbox.updateInvoice(OPEN, { payStatus: 'paid', status: 'closed' });
    // Only the replies that tell the payment: whatever else the watch's end says is not counted.
    const told = () =>
      slack
        .repliesIn('C0SUPPORT', card.ts)
        .filter((m) => visibleText(m).includes('*Payment*: Not paid → Paid'));
    await until(() => told().length > 0, 'the payment told in the thread');
    // Past the late answer, and past a lease taken over and a retry of the post.
    await new Promise((r) => setTimeout(r, 45_000));
    expect(told()).toHaveLength(1);
    expect(card.edits.length).toBeGreaterThan(0);
    expect(slack.problems).toEqual([]);
  }, 90_000);
});
