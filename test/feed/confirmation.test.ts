import { describe, expect, it } from 'vitest';
import { SlackPostError } from '../../src/slack/calls.js';
import type { OutgoingMessage } from '../../src/slack/poster.js';
import { HOME_TEAM } from '../support/bolt.js';
import { useSandbox } from '../support/use-sandbox.js';
import type { feedInstance } from './feed-instance.js';
import { FINANCE, financeChannel } from './finance-channel.js';

/**
 * "The feed is on" in the channel, when Slack's answer to it is lost: the feed stays on and the
 * channel is told once; only a definite refusal means the feed did not start.
 */

const env = useSandbox();
const world = financeChannel(env);
const TURNED_ON = /^Payments feed turned on in this channel/;

const subscribe = (feed: ReturnType<typeof feedInstance>['feed']) => feed.subscribe(world.request());
const { said, payment } = world;
const instance = () => world.instance();

/** The next post to FINANCE fails with `error`; with `taken`, after Slack took it. */
function failFirstPost(error: SlackPostError, taken: boolean) {
  const { poster } = world;
  const post = poster.post;
  let failed = false;
  poster.post = async (message: OutgoingMessage) => {
    if (failed || message.channel !== FINANCE) return post(message);
    failed = true;
    if (taken) await post(message);
    throw error;
  };
}

describe('the first message of a feed, when Slack’s answer is lost', () => {
  it('keeps the feed when the post timed out after Slack took it: said once, and payments follow', async () => {
    const { feed, tick } = instance();
    failFirstPost(new SlackPostError('transient', undefined), true);
    expect(await subscribe(feed)).toEqual({ kind: 'subscribed', digest: '09:00 UTC' });
    await payment(tick);
    expect(said()).toEqual([expect.stringMatching(TURNED_ON), 'Received: +1 BTC']);
    expect(await feed.list(HOME_TEAM)).toHaveLength(1);
  });

  it('delivers it through the outbox when Slack took nothing, before the first payment', async () => {
    const { feed, tick } = instance();
    failFirstPost(new SlackPostError('transient', 'service_unavailable'), false);
    expect(await subscribe(feed)).toMatchObject({ kind: 'subscribed' });
    await tick();
    expect(said()).toEqual([expect.stringMatching(TURNED_ON)]);
    await payment(tick);
    expect(said()).toEqual([expect.stringMatching(TURNED_ON), 'Received: +1 BTC']);
  });

  it('after a 429 (Slack took nothing) hands it to the outbox without looking for it', async () => {
    const { feed, tick } = instance();
    failFirstPost(new SlackPostError('rate_limited', 'ratelimited', 1000), false);
    expect(await subscribe(feed)).toMatchObject({ kind: 'subscribed' });
    expect(world.poster.calls.filter((c) => c.startsWith('find'))).toEqual([]);
    world.clock.now += 1000;
    await tick();
    expect(said()).toEqual([expect.stringMatching(TURNED_ON)]);
  });

  it('posts it again rather than leave the channel unaware when Slack will not let the bot look', async () => {
    const { feed, tick, logs } = instance();
    failFirstPost(new SlackPostError('transient', undefined), false);
    world.poster.find = async () => {
      throw new SlackPostError('refused', 'missing_scope');
    };
    expect(await subscribe(feed)).toMatchObject({ kind: 'subscribed' });
    await tick();
    expect(said()).toEqual([expect.stringMatching(TURNED_ON)]);
    expect(logs.lines.map((l) => l.msg)).toContain('could not look for the payments feed’s first message');
  });

  it('does not say the feed is on once it was turned off meanwhile', async () => {
    const { feed, tick } = instance();
    failFirstPost(new SlackPostError('transient', undefined), false);
    await subscribe(feed);
    await feed.unsubscribe({ channelId: FINANCE, userId: 'U0FIN' });
    await tick();
    expect(said()).toEqual(['<@U0FIN> turned off the payments feed in this channel.']);
  });

  it('starts no feed when Slack refuses the message for good', async () => {
    const { feed, tick } = instance();
    failFirstPost(new SlackPostError('refused', 'invalid_blocks'), false);
    await expect(subscribe(feed)).rejects.toThrow(SlackPostError);
    expect(await feed.list(HOME_TEAM)).toEqual([]);
    await payment(tick);
    expect(said()).toEqual([]);
  });
});
