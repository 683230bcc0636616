import { describe, expect, it } from 'vitest';
import { useSandbox } from '../support/use-sandbox.js';
import { FINANCE, financeChannel } from './finance-channel.js';

/** A feed turned off and on again before Slack took the "off": the channel reads them in the order they happened. */

const env = useSandbox();
const world = financeChannel(env);

describe('a feed turned on again while its "turned off" still waits to go out', () => {
  it('tells the channel "off" and then "on", never "on" before the "off" that came first', async () => {
    const { feed, tick } = world.instance();
    await feed.subscribe(world.request());
    await feed.unsubscribe({ channelId: FINANCE, userId: 'U0OTHER' });
    // Slack has not taken the "off" yet: the outbox still holds it.
    expect(await feed.subscribe(world.request())).toMatchObject({ kind: 'subscribed' });
    expect(world.said()).toEqual([expect.stringMatching(/^Payments feed turned on/)]);
    await tick();
    expect(world.said()).toEqual([
      expect.stringMatching(/^Payments feed turned on/),
      '<@U0OTHER> turned off the payments feed in this channel.',
      expect.stringMatching(/^Payments feed turned on/),
    ]);
  });

  it('posts "on" at once when nothing waits for the channel', async () => {
    const { feed, tick } = world.instance();
    await feed.subscribe(world.request());
    await feed.unsubscribe({ channelId: FINANCE, userId: 'U0OTHER' });
    await tick();
    await feed.subscribe(world.request());
    expect(world.said()).toHaveLength(3);
    expect(world.said()[2]).toMatch(/^Payments feed turned on/);
  });
});
