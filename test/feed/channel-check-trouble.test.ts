import { describe, expect, it } from 'vitest';
import { TOKEN_PAUSE_MS } from '../../src/feed/channel.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { useSandbox } from '../support/use-sandbox.js';
import { FINANCE, financeChannel } from './finance-channel.js';

/**
 * conversations.info, asked just before a feed message goes out, failing the way any Slack call
 * may: a time-out or a 429 is waited out as for any message, never taken for the token's trouble
 * (paused for TOKEN_PAUSE_MS, and logged so); a bug of the bot's own is not hidden as either.
 */

const env = useSandbox();
const world = financeChannel(env);
const PAUSED = 'payments feed paused: Slack refuses the bot’s token; its messages wait';

/** A feed is on, a payment arrives, and the next channel check fails with `failure`. */
async function paymentChecked(failure: SlackPostError) {
  const bot = world.instance();
  await bot.feed.subscribe(world.request());
  world.poster.failNext(failure);
  await world.payment(bot.tick);
  expect(world.said()).toHaveLength(1); // "the feed is on" only: the payment waits
  return bot;
}
const announced = () => world.said().slice(1);
const pausedLogs = (bot: { logs: { lines: Record<string, unknown>[] } }) =>
  bot.logs.lines.filter((l) => l.msg === PAUSED);

describe('a channel check Slack did not answer', () => {
  it.each([
    ['a time-out', new SlackPostError('transient', undefined)],
    ['an Enterprise Grid migration', new SlackPostError('refused', 'org_login_required')],
  ])('is tried again within seconds after %s, not paused as the token’s trouble', async (_what, failure) => {
    const bot = await paymentChecked(failure);
    world.clock.now += 2000;
    await bot.tick();
    expect(announced()).toEqual(['Received: +1 BTC']);
    expect(pausedLogs(bot)).toEqual([]);
  });

  it('waits as long as a 429 asks, and no longer', async () => {
    const bot = await paymentChecked(new SlackPostError('rate_limited', 'ratelimited', 30_000));
    world.clock.now += 29_000;
    await bot.tick();
    expect(announced()).toEqual([]);
    world.clock.now += 1000;
    await bot.tick();
    expect(announced()).toEqual(['Received: +1 BTC']);
    expect(pausedLogs(bot)).toEqual([]);
  });

  it('says which channel paused, and what Slack answered, when it refuses the token', async () => {
    const bot = await paymentChecked(new SlackPostError('refused', 'token_revoked'));
    expect(pausedLogs(bot)).toEqual([
      expect.objectContaining({
        level: 'warn',
        channel: FINANCE,
        err: expect.objectContaining({ message: expect.stringContaining('token_revoked') }),
      }),
    ]);
    world.clock.now += TOKEN_PAUSE_MS;
    await bot.tick();
    expect(announced()).toEqual(['Received: +1 BTC']);
  });
});

describe('a channel check that fails for a bug of the bot’s own', () => {
  it('lets it through to the scheduler’s log, not taken for Slack refusing the token', async () => {
    const bot = world.instance();
    await bot.feed.subscribe(world.request());
    world.poster.conversation = async () => {
      throw new TypeError('a bug');
    };
    await expect(world.payment(bot.tick)).rejects.toThrow('a bug');
    expect(pausedLogs(bot)).toEqual([]);
  });
});
