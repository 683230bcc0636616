import { describe, expect, it } from 'vitest';
import { createHealth } from '../../src/payments/health.js';

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
    const health = createHealth(() => now);
    expect(health.snapshot()).toEqual({ lastSuccess: undefined, lastProblem: undefined });
    health.record(report('ok'));
    now = 2000;
    health.record(report('timeout'));
    expect(health.snapshot()).toEqual({
      lastSuccess: { at: new Date(1000), operation: 'invoice' },
      lastProblem: { at: new Date(2000), result: 'timeout' },
    });
  });

  it('does not count a person’s unknown invoice, or its own full queue, as a problem of the service', () => {
    const health = createHealth(() => 1000);
    health.record(report('invoice_not_found'));
    health.record(report('busy'));
    expect(health.snapshot()).toEqual({ lastSuccess: undefined, lastProblem: undefined });
  });
});
