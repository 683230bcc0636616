import { describe, expect, it } from 'vitest';
import { MAX_BACKOFF_MS } from '../src/outbox.js';
import { SlackPostError } from '../src/slack/calls.js';
import { decide, message, outboxJob, outboxRows, T0, useOutboxWorld } from './support/outbox-world.js';

/**
 * Retry times are written by this machine's clock: a clock stepped back an hour (an NTP step, a
 * restored VM) must not hold a backed-off message, and everything behind it in its channel, for
 * an hour more than its backoff.
 */

const world = useOutboxWorld();
const HOUR = 3_600_000;

/** Claims and runs what is due now, as the scheduler does; the outcomes. */
async function tick(outbox: ReturnType<typeof outboxJob>['outbox']) {
  const rows = await outbox.claim(world.clock.now, 10);
  return Promise.all(rows.map((row) => outbox.run(row)));
}

describe('the outbox after the clock steps back', () => {
  it('sends a backed-off message, and the one queued behind it, within the backoff, not an hour later', async () => {
    const { outbox } = outboxJob(world);
    await decide(world, [
      { channel: 'C1', message },
      { channel: 'C1', message: { ...message, text: 'Second' } },
    ]);
    world.poster.failNext(new SlackPostError('transient', 'internal_error'));
    expect((await tick(outbox)).map((r) => r.outcome)).toEqual(['retry_later']);
    world.clock.now -= HOUR;
    world.clock.now += 2_000;
    expect((await tick(outbox)).map((r) => r.outcome)).toEqual(['sent']);
    expect((await tick(outbox)).map((r) => r.outcome)).toEqual(['sent']);
    expect(world.poster.repliesIn('C1').map((p) => p.text)).toEqual(['Paid', 'Second']);
  });

  it('keeps Slack’s Retry-After to the longest backoff, and pulls back only times no backoff writes', async () => {
    const { outbox } = outboxJob(world);
    await decide(world, [{ channel: 'C1', message }]);
    world.poster.failNext(new SlackPostError('rate_limited', 'ratelimited', 2 * HOUR));
    await tick(outbox);
    expect((await outboxRows(world))[0]?.next_attempt_at).toBe(T0 + MAX_BACKOFF_MS);
    // A minute short of the longest wait: still waiting, nothing pulled back.
    world.clock.now = T0 + 60_000;
    expect(await tick(outbox)).toEqual([]);
    world.clock.now = T0 + MAX_BACKOFF_MS;
    expect((await tick(outbox)).map((r) => r.outcome)).toEqual(['sent']);
  });
});
