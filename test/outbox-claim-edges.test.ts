import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KyselyPlugin } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { claimOutbox } from '../src/outbox-claim.js';
import { openStore, type Store } from '../src/store/database.js';
import type { InstallationId } from '../src/store/keys.js';
import { writeAsOtherInstance } from './support/other-instance.js';

const dir = mkdtempSync(join(tmpdir(), 'bot-outbox-claim-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NOW = 1_795_262_400_000;
const LEASE_MS = 60_000;

let n = 0;
async function fresh(): Promise<{ store: Store; path: string }> {
  n += 1;
  const path = join(dir, String(n), 'bot.sqlite');
  return { store: await openStore({ kind: 'sqlite', path }), path };
}

/** One message due now in each lane, oldest first, as `installation/lane`; their ids in that order. */
async function due(store: Store, ...lanes: string[]): Promise<number[]> {
  const rows = await store.db
    .insertInto('outbox')
    .values(
      lanes.map((lane) => ({
        installation_id: lane.split('/')[0] as InstallationId,
        lane,
        method: 'chat.postMessage' as const,
        channel: lane.split('/')[1] as string,
        message: '{"text":"hello"}',
        created_at: NOW,
        next_attempt_at: NOW,
        attempts: 0,
      })),
    )
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

const claim = (store: Store, limit: number, busy: ReadonlyMap<string, number> = new Map()) =>
  claimOutbox(store, { owner: 'me', now: NOW, limit, leaseMs: LEASE_MS, busy });

/**
 * The store as one instance sees it while another takes messages too: after each of the first
 * `rounds` reads of what is due, the other instance leases the message `pick` names among those
 * read (on a connection of its own), before this one leases what it chose.
 */
function racing(
  store: Store,
  path: string,
  rounds: number,
  pick: (read: { id: number; installation_id: string }[]) => number | undefined,
): Store {
  const reads = new Set<unknown>();
  let left = rounds;
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      if (args.node.kind === 'SelectQueryNode') reads.add(args.queryId);
      return args.node;
    },
    async transformResult(args) {
      if (left > 0 && reads.has(args.queryId)) {
        left -= 1;
        const id = pick(args.result.rows as { id: number; installation_id: string }[]);
        if (id !== undefined) {
          await writeAsOtherInstance(
            path,
            'update outbox set lease_owner = ?, lease_until = ? where id = ?',
            'other',
            NOW + LEASE_MS,
            id,
          );
        }
      }
      return args.result;
    },
  };
  return { ...store, db: store.db.withPlugin(plugin) };
}

const ids = (rows: { id: number }[]) => rows.map((r) => r.id);

describe('claiming the outbox’s messages', () => {
  it('never takes more than asked, even with every installation’s turn left', async () => {
    const { store } = await fresh();
    await due(store, 'A/c1', 'A/c2', 'B/c1', 'B/c2');
    const claimed = await claim(store, 2);
    expect(claimed).toHaveLength(2);
    expect(claimed.map((r) => r.installation_id).sort()).toEqual(['A', 'B']);
    await store.close();
  });

  it('gives one installation at most two of the claim while another has messages due', async () => {
    const { store } = await fresh();
    const [a1, a2, , , b1] = await due(store, 'A/c1', 'A/c2', 'A/c3', 'A/c4', 'B/c1');
    const claimed = await claim(store, 4);
    expect(ids(claimed)).toEqual([a1, b1, a2]);
    expect(claimed.every((r) => r.lease_owner === 'me' && r.lease_until === NOW + LEASE_MS)).toBe(true);
    await store.close();
  });

  it('returns them in the order taken: each installation’s first turn before anyone’s second', async () => {
    const { store } = await fresh();
    const [a1, a2, b1, c1] = await due(store, 'A/c1', 'A/c2', 'B/c1', 'C/c1');
    expect(ids(await claim(store, 4))).toEqual([a1, b1, c1, a2]);
    await store.close();
  });

  it('looks past an installation already at its share in this instance for another’s second turn', async () => {
    const { store } = await fresh();
    const [, , , b1, b2] = await due(store, 'A/c1', 'A/c2', 'A/c3', 'B/c1', 'B/c2');
    const claimed = await claim(store, 2, new Map([['A', 2]]));
    expect(ids(claimed)).toEqual([b1, b2]);
    await store.close();
  });
});

describe('claiming while another instance takes messages too', () => {
  it('reads again for what the other took, counting what it already holds of each installation', async () => {
    const { store, path } = await fresh();
    const [a1, a2, a3, b1] = await due(store, 'A/c1', 'A/c2', 'A/c3', 'B/c1');
    const other = racing(store, path, 1, (read) => read.find((r) => r.installation_id === 'B')?.id);
    const claimed = await claim(other, 4);
    // B's message went to the other instance; A's third stays: A has its share while B has one due.
    expect(ids(claimed)).toEqual([a1, a2]);
    const rest = await store.db.selectFrom('outbox').select(['id', 'lease_owner']).orderBy('id').execute();
    expect(rest).toEqual([
      { id: a1, lease_owner: 'me' },
      { id: a2, lease_owner: 'me' },
      { id: a3, lease_owner: null },
      { id: b1, lease_owner: 'other' },
    ]);
    await store.close();
  });

  it('makes up in a second round for a message the other instance took in the first', async () => {
    const { store, path } = await fresh();
    const lanes = Array.from({ length: 6 }, (_, i) => `A/c${i}`);
    const all = await due(store, ...lanes);
    const other = racing(store, path, 1, (read) => read[0]?.id);
    const claimed = await claim(other, 4);
    expect(ids(claimed)).toEqual(all.slice(1, 5));
    expect(claimed).toHaveLength(4);
    await store.close();
  });

  it('gives up after four rounds that the other instance won, keeping what it took', async () => {
    const { store, path } = await fresh();
    const lanes = Array.from({ length: 12 }, (_, i) => `A/c${String(i).padStart(2, '0')}`);
    await due(store, ...lanes);
    const other = racing(store, path, 4, (read) => read[0]?.id);
    const claimed = await claim(other, 6);
    // Round one: six chosen, one taken by the other; rounds two to four: the one chosen is taken.
    expect(claimed).toHaveLength(5);
    const mine = await store.db.selectFrom('outbox').select('id').where('lease_owner', '=', 'me').execute();
    const theirs = await store.db
      .selectFrom('outbox')
      .select('id')
      .where('lease_owner', '=', 'other')
      .execute();
    expect([mine.length, theirs.length]).toEqual([5, 4]);
    await store.close();
  });
});
