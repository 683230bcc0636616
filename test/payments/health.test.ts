import { describe, expect, it } from 'vitest';
import type { BreakerState } from '../../src/payments/breaker.js';
import { createHealth } from '../../src/payments/health.js';

const closed = { state: (): BreakerState => 'closed' };

const report = (result: Parameters<ReturnType<typeof createHealth>['record']>[0]['result']) => ({
  operation: 'invoice' as const,
  result,
  background: false,
  attempts: 1,
  ms: 5,
});

describe('the service’s health, as the App Home shows it', () => {
  it('remembers the last good answer and the last service problem, each with its time', () => {
    let now = 1000;
    const health = createHealth(closed, () => now);
    expect(health.snapshot()).toEqual({ lastSuccess: undefined, lastProblem: undefined, breaker: 'closed' });
    health.record(report('ok'));
    now = 2000;
    health.record(report('timeout'));
    expect(health.snapshot()).toEqual({
      lastSuccess: { at: new Date(1000), operation: 'invoice' },
      lastProblem: { at: new Date(2000), result: 'timeout' },
      breaker: 'closed',
    });
  });

  it('does not count a person’s unknown invoice, or its own full queue, as a problem of the service', () => {
    const health = createHealth(closed, () => 1000);
    health.record(report('invoice_not_found'));
    health.record(report('busy'));
    health.record(report('service_down'));
    expect(health.snapshot()).toEqual({ lastSuccess: undefined, lastProblem: undefined, breaker: 'closed' });
  });

  it('tells the breaker’s state as it is when asked', () => {
    let state: BreakerState = 'open';
    const health = createHealth({ state: () => state });
    expect(health.snapshot().breaker).toBe('open');
    state = 'half_open';
    expect(health.snapshot().breaker).toBe('half_open');
  });

  it.each([
    'invalid_api_key',
    'service_unavailable',
    'timeout',
    'rate_limited',
    'unexpected_response',
    'service_error',
  ] as const)('counts %s as a problem of the service', (result) => {
    const health = createHealth(closed, () => 3000);
    health.record(report(result));
    expect(health.snapshot().lastProblem).toEqual({ at: new Date(3000), result });
  });
});
