import { describe, expect, it } from 'vitest';
import { type BreakerOutcome, type BreakerState, CircuitBreaker } from '../../src/payments/breaker.js';

function breaker(threshold = 3, openMs = 1000) {
  let now = 0;
  const changes: BreakerState[] = [];
  const b = new CircuitBreaker({ threshold, openMs, now: () => now });
  b.onChange((state) => changes.push(state));
  return {
    b,
    changes,
    advance: (ms: number) => {
      now += ms;
    },
    /** Admits a call and records its outcome at once. */
    call(outcome: BreakerOutcome) {
      const admission = b.admit();
      if (admission) b.record(admission, outcome);
      return admission;
    },
  };
}

describe('the circuit breaker', () => {
  it('opens after `threshold` calls in a row that got no answer, and refuses calls then', () => {
    const { b, call, changes } = breaker(3);
    call('not_answered');
    call('not_answered');
    expect(b.state()).toBe('closed');
    call('not_answered');
    expect(b.state()).toBe('open');
    expect(b.admit()).toBeUndefined();
    expect(changes).toEqual(['open']);
  });

  it('counts only a run: an answer in between starts the count again', () => {
    const { b, call } = breaker(3);
    call('not_answered');
    call('not_answered');
    call('answered');
    call('not_answered');
    call('not_answered');
    expect(b.state()).toBe('closed');
    call('not_answered');
    expect(b.state()).toBe('open');
  });

  it('is told nothing by a call that was never sent: it neither breaks nor restarts the run', () => {
    const { b, call } = breaker(3);
    call('not_answered');
    call('not_answered');
    call('not_sent');
    expect(b.state()).toBe('closed');
    call('not_answered');
    expect(b.state()).toBe('open');
  });

  it('lets the next call probe when the probe was never sent, and stays open meanwhile', () => {
    const { b, call, advance, changes } = breaker(1, 1000);
    call('not_answered');
    advance(1000);
    call('not_sent');
    expect(b.state()).toBe('half_open');
    expect(b.admit()).toEqual({ probe: true });
    expect(changes).toEqual(['open']);
  });

  it('lets one probe go once open long enough, refusing the others while it runs', () => {
    const { b, call, advance } = breaker(1, 1000);
    call('not_answered');
    advance(999);
    expect(b.state()).toBe('open');
    expect(b.admit()).toBeUndefined();
    advance(1);
    expect(b.state()).toBe('half_open');
    const probe = b.admit();
    expect(probe).toEqual({ probe: true });
    expect(b.state()).toBe('open');
    expect(b.admit()).toBeUndefined();
  });

  it('closes at the probe’s first answer, and admits everyone again', () => {
    const { b, call, advance, changes } = breaker(1, 1000);
    call('not_answered');
    advance(1000);
    expect(call('answered')).toEqual({ probe: true });
    expect(b.state()).toBe('closed');
    expect(b.admit()).toEqual({ probe: false });
    expect(changes).toEqual(['open', 'closed']);
  });

  it('opens again for a whole period when the probe gets no answer', () => {
    const { b, call, advance, changes } = breaker(1, 1000);
    call('not_answered');
    advance(1000);
    call('not_answered');
    expect(b.state()).toBe('open');
    advance(999);
    expect(b.state()).toBe('open');
    advance(1);
    expect(b.state()).toBe('half_open');
    expect(changes).toEqual(['open', 'open']);
  });

  it('is not moved by a call that was already under way when it opened, unless it was answered', () => {
    const { b, call, advance, changes } = breaker(2, 1000);
    const early = b.admit();
    call('not_answered');
    call('not_answered');
    advance(500);
    if (early) b.record(early, 'not_answered');
    advance(500);
    // The straggler did not restart the open period.
    expect(b.state()).toBe('half_open');
    const late = b.admit();
    if (late) b.record(late, 'answered');
    expect(changes).toEqual(['open', 'closed']);
  });

  it('closes when any call is answered, even one started before it opened', () => {
    const { b, call } = breaker(2, 1000);
    const early = b.admit();
    call('not_answered');
    call('not_answered');
    if (early) b.record(early, 'answered');
    expect(b.state()).toBe('closed');
  });

  it('stays closed when its probe fails after a call already under way was answered', () => {
    const { b, call, advance, changes } = breaker(2, 1000);
    const early = b.admit();
    call('not_answered');
    call('not_answered');
    advance(1000);
    const probe = b.admit();
    if (early) b.record(early, 'answered');
    if (probe) b.record(probe, 'not_answered');
    expect(b.state()).toBe('closed');
    expect(changes).toEqual(['open', 'closed']);
  });

  it('stops telling a listener that unsubscribed', () => {
    const b = new CircuitBreaker({ threshold: 1, now: () => 0 });
    const seen: BreakerState[] = [];
    const off = b.onChange((s) => seen.push(s));
    off();
    const admission = b.admit();
    if (admission) b.record(admission, 'not_answered');
    expect(seen).toEqual([]);
  });

  it('opens after five failures and stays open ten seconds by default', () => {
    let now = 0;
    const b = new CircuitBreaker({ now: () => now });
    for (let i = 0; i < 4; i += 1) b.record({ probe: false }, 'not_answered');
    expect(b.state()).toBe('closed');
    b.record({ probe: false }, 'not_answered');
    expect(b.state()).toBe('open');
    now = 9_999;
    expect(b.state()).toBe('open');
    now = 10_000;
    expect(b.state()).toBe('half_open');
  });
});

describe('the probe, and who hears of it', () => {
  it('keeps refusing while its probe is out, whatever a call from before the outage says of itself', () => {
    const { b, call, advance } = breaker(1, 1000);
    const early = b.admit();
    call('not_answered');
    advance(1000);
    expect(b.admit()).toEqual({ probe: true });
    if (early) b.record(early, 'not_sent');
    expect(b.state()).toBe('open');
    expect(b.admit()).toBeUndefined();
  });

  it('lets a probe go again after the next outage, once one answer closed it', () => {
    const { b, call, advance, changes } = breaker(1, 1000);
    call('not_answered');
    advance(1000);
    call('answered');
    call('not_answered');
    advance(1000);
    expect(b.state()).toBe('half_open');
    expect(changes).toEqual(['open', 'closed', 'open']);
  });

  it('tells its listeners nothing while answers come and it stays closed', () => {
    const { call, changes } = breaker(3);
    call('answered');
    call('not_answered');
    call('answered');
    expect(changes).toEqual([]);
  });
});
