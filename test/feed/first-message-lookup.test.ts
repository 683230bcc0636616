import { describe, expect, it } from 'vitest';
import { ATTEMPT_WINDOW_MS, CLOCK_TOLERANCE_MS } from '../../src/outbox.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { useSandbox } from '../support/use-sandbox.js';
import { FINANCE, financeChannel, T0 } from './finance-channel.js';

/**
 * "The feed is on" timed out: where and how the bot looks for it, what it logs, and a bug met
 * while looking, which is no reason to post the message again.
 */

const env = useSandbox();
const world = financeChannel(env);
const TURNED_ON = /^Payments feed turned on in this channel/;
const TURNED_OFF = '<@U0FIN> turned off the payments feed in this channel.';

/** The next post times out, Slack having taken nothing. */
function nextPostTimesOut() {
  const post = world.poster.post;
  world.poster.post = async () => {
    world.poster.post = post;
    throw new SlackPostError('transient', undefined);
  };
}

describe('looking for a first message whose answer was lost', () => {
  it('looks in the minutes around the attempt only, allowing for either clock to be ahead', async () => {
    const { feed } = world.instance();
    nextPostTimesOut();
    const asked: unknown[] = [];
    const find = world.poster.find;
    world.poster.find = async (where) => {
      asked.push(where);
      return find(where);
    };
    await feed.subscribe(world.request());
    expect(asked).toEqual([
      expect.objectContaining({
        channel: FINANCE,
        oldest: T0 - CLOCK_TOLERANCE_MS,
        latest: T0 + ATTEMPT_WINDOW_MS,
      }),
    ]);
  });

  it('does not take the first message of the channel’s earlier feed for it: a feed turned on again says so', async () => {
    const { feed, tick } = world.instance();
    await feed.subscribe(world.request());
    await feed.unsubscribe({ channelId: FINANCE, userId: 'U0FIN' });
    await tick();
    world.clock.now += 60_000;
    nextPostTimesOut();
    expect(await feed.subscribe(world.request())).toMatchObject({ kind: 'subscribed' });
    await tick();
    expect(world.said()).toEqual([
      expect.stringMatching(TURNED_ON),
      TURNED_OFF,
      expect.stringMatching(TURNED_ON),
    ]);
  });

  it('logs, naming the channel, that it hands the message to the outbox, and why', async () => {
    const { feed, logs } = world.instance();
    nextPostTimesOut();
    world.poster.find = async () => {
      throw new SlackPostError('refused', 'missing_scope');
    };
    await feed.subscribe(world.request());
    const warnings = logs.lines.filter((l) => l.level === 'warn');
    const refused = expect.objectContaining({ message: expect.stringContaining('missing_scope') });
    const timedOut = expect.objectContaining({ message: expect.stringContaining('transient') });
    expect(warnings).toEqual([
      expect.objectContaining({
        channel: FINANCE,
        err: refused,
        msg: 'could not look for the payments feed’s first message',
      }),
      expect.objectContaining({
        channel: FINANCE,
        err: timedOut,
        msg: 'the payments feed’s first message did not go out; the outbox delivers it',
      }),
    ]);
  });

  it('lets a bug met while looking through, rather than post the message again', async () => {
    const { feed, tick } = world.instance();
    nextPostTimesOut();
    world.poster.find = async () => {
      throw new TypeError('a bug');
    };
    await expect(feed.subscribe(world.request())).rejects.toThrow('a bug');
    await tick();
    expect(world.said()).toEqual([]);
  });
});
