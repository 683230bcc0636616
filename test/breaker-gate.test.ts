import { describe, expect, it } from 'vitest';
import type { BreakerState } from '../src/payments/index.js';
import { breakerGate } from '../src/service-state.js';

/** Many workspaces' claims: gated by the service's breaker alone (each key is gated when its work is served). */
describe('the claim gate of many workspaces', () => {
  it('claims what is wanted while the breaker is closed, its probe alone while half-open, nothing while open', async () => {
    let state: BreakerState = 'closed';
    const asked: number[] = [];
    const gate = breakerGate(() => state);
    const claim = async (limit: number) => {
      asked.push(limit);
      return Array.from({ length: limit }, (_, i) => i);
    };
    expect(await gate.claimWithin(0, 24, claim)).toHaveLength(24);
    state = 'half_open';
    expect(await gate.claimWithin(0, 24, claim)).toEqual([0]);
    state = 'open';
    expect(await gate.claimWithin(0, 24, claim)).toEqual([]);
    expect(asked).toEqual([24, 1]);
  });
});
