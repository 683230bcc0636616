import { describe, expect, it } from 'vitest';
import { createMetrics } from '../src/metrics.js';

describe('the outbox gauges', () => {
  it('says in seconds how long the oldest message has waited, never less than nothing', async () => {
    const metrics = createMetrics();
    let oldestAt: number | undefined = 10_000_000 - 90_500;
    metrics.gauges({
      inflight: () => 0,
      activeWatches: async () => 0,
      overdueChecks: async () => 0,
      breaker: () => 'closed',
      outbox: async () => ({ pending: 1, oldestAt }),
      now: () => 10_000_000,
      statements: () => 0,
    });
    const oldest = async () =>
      /^slackbot_outbox_oldest_seconds (\S+)$/m.exec(await metrics.registry.metrics())?.[1];
    expect(await oldest()).toBe('90.5');
    oldestAt = 10_000_000 + 5_000; // written by an instance whose clock runs ahead
    expect(await oldest()).toBe('0');
    oldestAt = undefined;
    expect(await oldest()).toBe('0');
  });
});
