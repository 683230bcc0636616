import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { serviceState } from '../../src/service-state.js';
import { endWatchesOfAccount } from '../../src/watches/account.js';
import { createWatches, type WatchDeps } from '../../src/watches/service.js';
import { visibleText } from '../support/block-kit.js';
import { captureLogs, HOME_TEAM, TEST_WATCH_SETTINGS } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { NOW } from '../support/factories.js';
import { type RecordingPoster, recordingPoster } from '../support/fake-slack.js';
import { type Leasing, outboxOf, runDue, watchJob } from '../support/jobs.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * Disconnect (many workspaces) leaves nothing that can read an installation's invoices: its
 * watches end there and then, saying why, rather than keep cards that say "watching".
 */
const env = useSandbox();
const { open: OPEN } = DEMO_INVOICE_IDS;
const MINUTE = 60_000;

let clock: { now: number };
let poster: RecordingPoster;
beforeEach(async () => {
  clock = { now: NOW.getTime() };
  poster = recordingPoster();
  await emptyWork(env.store);
  env.sandbox.reset();
});

function instance(installation: string) {
  const logs = captureLogs();
  const deps: WatchDeps & Leasing = {
    store: env.store,
    payments: env.deps().payments,
    poster,
    state: serviceState(env.store, logs.logger),
    logger: logs.logger,
    clock: () => clock.now,
    settings: TEST_WATCH_SETTINGS,
    owner: 'a',
    installation,
  };
  const watches = createWatches(deps);
  const outbox = outboxOf({
    store: env.store,
    posterOf: async () => poster,
    logger: logs.logger,
    clock: () => clock.now,
    owner: 'a',
  });
  return { watches, tick: () => runDue([watchJob(deps, watches)], outbox, clock.now) };
}

const watch = (w: ReturnType<typeof instance>, channelId: string, invoiceId: typeof OPEN) =>
  w.watches.start({ teamId: HOME_TEAM, channelId, userId: 'U0WATCHER', invoiceId });

const disconnect = (installation: string) =>
  env.store.transaction((trx) =>
    endWatchesOfAccount(trx, { store: env.store, settings: TEST_WATCH_SETTINGS, installation }, clock.now),
  );

describe('a disconnected payment account', () => {
  it('ends each of its watches: the card says so, the thread is told once, and nothing is checked after', async () => {
    const a = instance('T0A');
    await watch(a, 'C0ONE', OPEN);
    await watch(a, 'C0TWO', OPEN);
    await a.tick();
    const before = poster.calls.length;

    expect(await disconnect('T0A')).toBe(2);
    await a.tick();
    const said = poster.calls.slice(before);
    expect(said.filter((c) => c.startsWith('update'))).toHaveLength(2);
    expect(said.filter((c) => c.includes('thread'))).toHaveLength(2);
    const [card] = poster.repliesIn('C0ONE');
    if (!card) throw new Error('no live card');
    expect(visibleText(card.edits.at(-1))).toContain('the workspace’s payment account was disconnected');
    expect(visibleText(card.edits.at(-1))).not.toContain('Stop watching');
    const thread = poster.repliesIn('C0ONE', card.ts).at(-1);
    expect(visibleText(thread)).toContain(
      'No longer watching *Order #1042 — annual support plan*: the workspace’s payment account was disconnected, so the bot can no longer read the invoice.',
    );
    expect(await a.watches.list('C0ONE')).toEqual([]);
    const reasons = await env.store.db.selectFrom('watches').select('end_reason').execute();
    expect(reasons.map((r) => r.end_reason)).toEqual(['account_disconnected', 'account_disconnected']);

    // Nothing is left to check, and a second Disconnect ends nothing more.
    const after = poster.calls.length;
    clock.now += 10 * MINUTE;
    expect(await a.tick()).toEqual([]);
    expect(poster.calls).toHaveLength(after);
    expect(await disconnect('T0A')).toBe(0);
  });

  it('leaves another installation’s watches of the same invoice alone', async () => {
    const a = instance('T0A');
    const b = instance('T0B');
    await watch(a, 'C0ONE', OPEN);
    await watch(b, 'C0ONE', OPEN);
    await disconnect('T0A');
    expect(await a.watches.list('C0ONE')).toEqual([]);
    expect(await b.watches.list('C0ONE')).toHaveLength(1);
    clock.now += 31_000;
    env.sandbox.updateInvoice(OPEN, { payStatus: 'paid', status: 'closed' });
    await b.tick();
    expect(poster.messages.map((m) => visibleText(m)).join('\n')).toContain('Not paid → Paid');
  });

  it('ends, without a word, a watch whose invoice was never read', async () => {
    const a = instance('T0A');
    await watch(a, 'C0ONE', OPEN);
    await a.tick();
    await env.store.db.deleteFrom('watched_invoices').execute();
    const before = poster.calls.length;
    expect(await disconnect('T0A')).toBe(1);
    await a.tick();
    expect(poster.calls).toHaveLength(before);
    expect(await a.watches.list('C0ONE')).toEqual([]);
  });
});
