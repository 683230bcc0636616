import { describe, expect, it } from 'vitest';
import { LeaseLost, leaseOf } from '../../src/store/lease.js';

describe('the lease a claimed row was taken under', () => {
  it('is what its work fences its writes with', () => {
    expect(leaseOf({ lease_owner: 'host:1:abcd' })).toBe('host:1:abcd');
  });

  it('is lost when the row is held by nobody: its work writes nothing', () => {
    expect(() => leaseOf({ lease_owner: null })).toThrow(LeaseLost);
  });
});
