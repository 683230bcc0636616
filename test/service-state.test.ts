import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BreakerState } from '../src/payments/index.js';
import { KEY_PROBE_MS, type ServiceState, serviceState } from '../src/service-state.js';
import { openStore, type Store } from '../src/store/database.js';
import { ONE_WORKSPACE } from '../src/store/keys.js';
import { captureLogs } from './support/bolt.js';

describe('background claims within what the key allows', () => {
  let dir: string;
  let store: Store;
  let state: ServiceState;
  /** A claim that records the limit it was given and returns that many rows, or none. */
  const claims: number[] = [];
  const claim = (found: boolean) => async (limit: number) => {
    claims.push(limit);
    return found ? Array.from({ length: limit }, (_, i) => i) : [];
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'service-state-'));
    store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
    state = serviceState(store, captureLogs().logger, { installation: ONE_WORKSPACE });
    claims.length = 0;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('claims all it wants while the key works', async () => {
    expect(await state.claimWithin(0, 8, claim(true))).toHaveLength(8);
    expect(await state.claimWithin(1, 8, claim(true))).toHaveLength(8);
    expect(claims).toEqual([8, 8]);
  });

  it('while the key is rejected, claims one probe per interval, shared by every job', async () => {
    await state.markKeyRejected(0);
    expect(await state.claimWithin(1000, 8, claim(true))).toHaveLength(1);
    // Another job (the balance poll) within the interval: no probe of its own.
    expect(await state.claimWithin(1000 + KEY_PROBE_MS - 1, 1, claim(true))).toEqual([]);
    expect(await state.claimWithin(1000 + KEY_PROBE_MS, 1, claim(true))).toHaveLength(1);
    expect(claims).toEqual([1, 1]);
  });

  it('spends no probe on a claim that found nothing', async () => {
    await state.markKeyRejected(0);
    expect(await state.claimWithin(1000, 8, claim(false))).toEqual([]);
    expect(await state.claimWithin(1001, 8, claim(true))).toHaveLength(1);
    expect(claims).toEqual([1, 1]);
  });

  it('claims nothing while the service’s breaker is open, and one probe once it is half-open', async () => {
    let breaker: BreakerState = 'open';
    const paused = serviceState(store, captureLogs().logger, {
      installation: ONE_WORKSPACE,
      circuit: () => breaker,
    });
    expect(await paused.claimWithin(0, 8, claim(true))).toEqual([]);
    expect(claims).toEqual([]);
    breaker = 'half_open';
    expect(await paused.claimWithin(1, 8, claim(true))).toHaveLength(1);
    breaker = 'closed';
    expect(await paused.claimWithin(2, 8, claim(true))).toHaveLength(8);
    expect(claims).toEqual([1, 8]);
  });

  it('lets the breaker’s half-open probe go even while the key is rejected and its own probe was spent', async () => {
    let breaker: BreakerState = 'closed';
    const both = serviceState(store, captureLogs().logger, {
      installation: ONE_WORKSPACE,
      circuit: () => breaker,
    });
    await both.markKeyRejected(0);
    expect(await both.claimWithin(1000, 8, claim(true))).toHaveLength(1);
    breaker = 'half_open';
    expect(await both.claimWithin(1001, 8, claim(true))).toHaveLength(1);
  });

  it('claims all it wants again once the key works', async () => {
    await state.markKeyRejected(0);
    await state.claimWithin(1000, 8, claim(true));
    await state.markKeyAccepted();
    expect(await state.claimWithin(1001, 8, claim(true))).toHaveLength(8);
  });
});
