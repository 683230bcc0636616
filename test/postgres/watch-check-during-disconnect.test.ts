import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { openStore } from '../../src/store/database.js';
import { installationId } from '../../src/store/keys.js';
import { endWatchesOfAccount } from '../../src/watches/account.js';
import { TEST_WATCH_SETTINGS } from '../support/bolt.js';
import { freshDatabase } from '../support/postgres-server.js';
import { useWatchWorld, watchRequest } from '../support/watch-world.js';

/**
 * A check of an invoice watched in several channels, and a Disconnect of the same installation,
 * at the same moment on PostgreSQL: the check that has a change to tell locks the invoice's watches, the Disconnect every
 * watch of the installation. Locked in different orders, each would hold a row the other waits
 * for (a deadlock, one of them aborted). The planner is made to read by index, as it does on a
 * large table: the check by id, the Disconnect by another index. Before both locked in the
 * order of the ids, this ended in "deadlock detected" for one of them.
 */
const url = await freshDatabase(inject('postgresUrl'));
const setup = await openStore({ kind: 'postgres', url });
const name = new URL(url).pathname.slice(1);
await sql.raw(`alter database ${name} set enable_seqscan = off`).execute(setup.db);
await sql.raw(`alter database ${name} set enable_bitmapscan = off`).execute(setup.db);
await setup.close();
const checking = await openStore({ kind: 'postgres', url });
const disconnecting = await openStore({ kind: 'postgres', url });
const blocking = await openStore({ kind: 'postgres', url });

const world = useWatchWorld();
const INSTALLATION = installationId('T0A');
const CHANNELS = ['C1', 'C2', 'C3', 'C4', 'C5'];
/** Resolves once a session waits for a row lock in a statement that `matches`. */
async function waitingOn(matches: RegExp): Promise<void> {
  for (let tries = 0; tries < 500; tries += 1) {
    const { rows } = await sql<{ query: string }>`select query from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(blocking.db);
    if (rows.some((r) => matches.test(r.query))) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no session waits on a lock in ${matches}`);
}

describe('a check racing a Disconnect, on PostgreSQL', () => {
  it('neither deadlocks: the Disconnect ends every watch, the check finds them ended', async () => {
    const { watches, poll } = world.instance({ store: checking, installation: INSTALLATION });
    for (const channelId of CHANNELS) await watches.start(watchRequest({ channelId }));
    // Ids in the reverse order of the channels: C1's the greatest.
    for (const [i, channel] of CHANNELS.entries())
      await checking.db
        .updateTable('watches')
        .set({ id: `w${9 - i}` })
        .where('channel_id', '=', channel)
        .execute();

    // The installation watches many other invoices: the check's few ids are best found by id.
    await checking.db
      .insertInto('watches')
      .values(
        Array.from({ length: 500 }, (_, i) => ({
          id: `x${String(i).padStart(3, '0')}`,
          installation_id: INSTALLATION,
          team_id: 'T0A',
          channel_id: `C0OTHER${i}`,
          invoice_id: `other-${i}`,
          watcher_id: 'U0',
          card_ts: '1.1',
          thread_ts: '1.1',
          state: 'active' as const,
          started_at: world.clock.now,
          ends_at: world.clock.now + 86_400_000,
          ended_at: null,
          end_reason: null,
        })),
      )
      .execute();
    await sql`analyze watches`.execute(checking.db);

    // A third transaction holds C3's watch: the check and the Disconnect each lock what comes
    // before it in their order, and wait.
    let unblock = () => {};
    const held = new Promise<void>((resolve) => {
      unblock = resolve;
    });
    let locked = () => {};
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const blocker = blocking.transaction(async (trx) => {
      await trx.selectFrom('watches').select('id').where('channel_id', '=', 'C3').forUpdate().execute();
      locked();
      await held;
    });
    await lockTaken;
    // A change to tell: the check records it with its watches locked (a quiet check locks none).
    world.env.sandbox.updateInvoice(DEMO_INVOICE_IDS.open, { payStatus: 'partially_paid' });
    world.clock.now += 31_000;
    const [row] = await poll.claim(world.clock.now, 10);
    if (!row) throw new Error('no check due');
    const checked = poll.run(row);
    await waitingOn(/"id" in/);
    const disconnected = disconnecting.transaction((trx) =>
      endWatchesOfAccount(
        trx,
        { store: disconnecting, settings: TEST_WATCH_SETTINGS, installation: INSTALLATION },
        world.clock.now,
      ),
    );
    await waitingOn(/"installation_id" = \$1 and "state"/);
    unblock();
    await blocker;

    const settled = await Promise.allSettled([checked, disconnected]);
    // Not "error: deadlock detected" for one of them: both lock an invoice's watches in the order of their ids.
    expect(settled.map((r) => (r.status === 'rejected' ? String(r.reason) : 'done'))).toEqual([
      'done',
      'done',
    ]);
    expect(settled[1]).toEqual({ status: 'fulfilled', value: 505 });
    const states = await checking.db
      .selectFrom('watches')
      .select(['state', 'end_reason'])
      .distinct()
      .execute();
    expect(states).toEqual([{ state: 'ended', end_reason: 'account_disconnected' }]);
  });
});
