import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/database.js';
import { NOW } from '../support/factories.js';
import { statesSeenContract } from '../support/states-seen-contract.js';
import { clock, env, instance, OPEN, request, useWatchService } from './watch-service-setup.js';

/**
 * Issue 41 §2: the states a watched invoice passes through, as its side panel lists them:
 * recorded when a watch starts and when a check sees its status or payment status change.
 */
useWatchService();

describe('the states a watch sees', () => {
  it('records the state at the start and each change a check finds, in the order seen', async () => {
    const a = instance('a');
    await a.watches.start(request());
    clock.now += 31_000;
    await a.tick();
    env.sandbox.payInvoice(OPEN);
    clock.now += 31_000;
    expect(await a.tick()).toContainEqual(expect.objectContaining({ outcome: 'changed', invoiceId: OPEN }));
    expect(await a.watches.statesSeen(OPEN)).toEqual([
      { status: 'open', payStatus: 'none', at: NOW },
      { status: 'closed', payStatus: 'paid', at: new Date(NOW.getTime() + 62_000) },
    ]);
  });
});

let n = 0;
const dir = mkdtempSync(join(tmpdir(), 'bot-states-seen-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
statesSeenContract('SQLite', async () => {
  n += 1;
  return openStore({ kind: 'sqlite', path: join(dir, `${n}.sqlite`) });
});
