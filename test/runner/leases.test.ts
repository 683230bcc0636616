import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LeaseLost, leaseOf } from '../../src/runner/leases.js';
import { openStore } from '../../src/store/database.js';
import { leaseRenewalContract } from '../support/lease-renewal-contract.js';

describe('the lease a claimed row was taken under', () => {
  it('is what its work fences its writes with', () => {
    expect(leaseOf({ lease_owner: 'host:1:abcd' })).toBe('host:1:abcd');
  });

  it('is lost when the row is held by nobody: its work writes nothing', () => {
    expect(() => leaseOf({ lease_owner: null })).toThrow(LeaseLost);
  });
});

const dir = mkdtempSync(join(tmpdir(), 'bot-lease-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
leaseRenewalContract('SQLite', () => openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') }));
