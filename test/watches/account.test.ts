import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { type InstallationId, installationId } from '../../src/store/keys.js';
import { endWatchesOfAccount } from '../../src/watches/account.js';
import { visibleText } from '../support/block-kit.js';
import { HOME_TEAM, TEST_WATCH_SETTINGS } from '../support/bolt.js';
import { useWatchWorld } from '../support/watch-world.js';

/**
 * Disconnect (many workspaces) leaves nothing that can read an installation's invoices: its
 * watches end there and then, saying why, rather than keep cards that say "watching".
 */
const world = useWatchWorld();
const { env, clock } = world;
const { open: OPEN } = DEMO_INVOICE_IDS;
const MINUTE = 60_000;

const instance = (installation: InstallationId) => world.instance({ installation });

const watch = (w: ReturnType<typeof instance>, channelId: string, invoiceId: typeof OPEN) =>
  w.watches.start({ teamId: HOME_TEAM, channelId, userId: 'U0WATCHER', invoiceId });

const disconnect = (installation: InstallationId) =>
  env.store.transaction((trx) =>
    endWatchesOfAccount(trx, { store: env.store, settings: TEST_WATCH_SETTINGS, installation }, clock.now),
  );

describe('a disconnected payment account', () => {
  it('ends each of its watches: the card says so, the thread is told once, and nothing is checked after', async () => {
    const a = instance(installationId('T0A'));
    await watch(a, 'C0ONE', OPEN);
    await watch(a, 'C0TWO', OPEN);
    await a.tick();
    const before = world.poster.calls.length;

    expect(await disconnect(installationId('T0A'))).toBe(2);
    await a.tick();
    const said = world.poster.calls.slice(before);
    expect(said.filter((c) => c.startsWith('update'))).toHaveLength(2);
    expect(said.filter((c) => c.includes('thread'))).toHaveLength(2);
    const [card] = world.poster.repliesIn('C0ONE');
    if (!card) throw new Error('no live card');
    expect(visibleText(card.edits.at(-1))).toContain('the workspace’s payment account was disconnected');
    expect(visibleText(card.edits.at(-1))).not.toContain('Stop watching');
    const thread = world.poster.repliesIn('C0ONE', card.ts).at(-1);
    expect(visibleText(thread)).toContain(
      'No longer watching *Order #1042 — annual support plan*: the workspace’s payment account was disconnected, so the bot can no longer read the invoice.',
    );
    expect(await a.watches.list('C0ONE')).toEqual([]);
    const reasons = await env.store.db.selectFrom('watches').select('end_reason').execute();
    expect(reasons.map((r) => r.end_reason)).toEqual(['account_disconnected', 'account_disconnected']);

    // Nothing is left to check, and a second Disconnect ends nothing more.
    const after = world.poster.calls.length;
    clock.now += 10 * MINUTE;
    expect(await a.tick()).toEqual([]);
    expect(world.poster.calls).toHaveLength(after);
    expect(await disconnect(installationId('T0A'))).toBe(0);
  });

  it('leaves another installation’s watches of the same invoice alone', async () => {
    const a = instance(installationId('T0A'));
    const b = instance(installationId('T0B'));
    await watch(a, 'C0ONE', OPEN);
    await watch(b, 'C0ONE', OPEN);
    await disconnect(installationId('T0A'));
    expect(await a.watches.list('C0ONE')).toEqual([]);
    expect(await b.watches.list('C0ONE')).toHaveLength(1);
    clock.now += 31_000;
    env.sandbox.updateInvoice(OPEN, { payStatus: 'paid', status: 'closed' });
    await b.tick();
    expect(world.poster.messages.map((m) => visibleText(m)).join('\n')).toContain('Not paid → Paid');
  });

  it('ends, without a word, a watch whose invoice was never read', async () => {
    const a = instance(installationId('T0A'));
    await watch(a, 'C0ONE', OPEN);
    await a.tick();
    await env.store.db.deleteFrom('watched_invoices').execute();
    const before = world.poster.calls.length;
    expect(await disconnect(installationId('T0A'))).toBe(1);
    await a.tick();
    expect(world.poster.calls).toHaveLength(before);
    expect(await a.watches.list('C0ONE')).toEqual([]);
  });
});
