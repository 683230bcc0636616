import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import type { DepsOptions } from '../support/bolt.js';
import { useWatchWorld, watchRequest } from '../support/watch-world.js';

/**
 * Set-up shared by the watch service's test files (service-*.test.ts): the watch world of
 * test/support/watch-world.ts, its names and values. `world`, `env` and `clock` are live
 * bindings, set by `useWatchService()`.
 */

export const OPEN = DEMO_INVOICE_IDS.open;
export const CHANNEL = 'C0SUPPORT';
export const MINUTE = 60_000;
/** A change that leaves the invoice awaiting payment (part of it paid), so its watch goes on. */
export const PART_PAID = { payStatus: 'partially_paid' };
/** The "paid" demo invoice as one that still awaits payment, far from its expiry: a second one to watch. */
export const SECOND = { status: 'open', payStatus: 'none', timeout: '2099-01-01T00:00:00.000Z' };

export let world: ReturnType<typeof useWatchWorld>;
export let env: ReturnType<typeof useWatchWorld>['env'];
export let clock: ReturnType<typeof useWatchWorld>['clock'];

/** Registers the file's watch world; call once, at the top of a test file. */
export function useWatchService(): void {
  world = useWatchWorld();
  ({ env, clock } = world);
}

/** One bot instance: its watches, its outbox, its clock. Several share the store and the fake Slack. */
export const instance = (name: string, settings = {}, wakeOutbox?: () => void, payments: DepsOptions = {}) =>
  world.instance({ name, settings, wakeOutbox, payments });

export const request = watchRequest;

export const card = () => {
  const [first] = world.poster.repliesIn(CHANNEL);
  if (!first) throw new Error('no card posted');
  return first;
};
