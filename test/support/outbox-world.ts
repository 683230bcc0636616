import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type DropReason, enqueue, type OutboxRow } from '../../src/outbox.js';
import type { SlackPoster } from '../../src/slack/poster.js';
import { openStore, type Store } from '../../src/store/database.js';
import { type InstallationId, ONE_WORKSPACE } from '../../src/store/keys.js';
import { captureLogs } from './bolt.js';
import { type RecordingPoster, recordingPoster } from './fake-slack.js';
import { outboxOf } from './jobs.js';

export const T0 = Date.parse('2026-11-21T08:00:00Z');
export const message = {
  text: 'Paid',
  blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'Paid' } }],
};

/** What a file of outbox tests shares; the poster and the clock are new for each test. */
export interface OutboxWorld {
  store: Store;
  poster: RecordingPoster;
  clock: { now: number };
}

/** A store for the file's tests, emptied of messages before each test, a recording poster and a clock at T0. */
export function useOutboxWorld(): OutboxWorld {
  let dir = '';
  const world = {} as OutboxWorld;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bot-outbox-'));
    world.store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
  });
  afterAll(async () => {
    await world.store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await world.store.db.deleteFrom('outbox').execute();
    world.poster = recordingPoster();
    world.clock = { now: T0 };
  });
  return world;
}

/** The outbox job on `world` as owner `a` unless told, with what it dropped and logged. */
export function outboxJob(
  world: OutboxWorld,
  extra: {
    owner?: string;
    leaseMs?: number;
    undeliverable?: OutboxRow[];
    mayDeliver?: () => Promise<boolean>;
    posterOf?: () => Promise<SlackPoster | undefined>;
  } = {},
) {
  const logs = captureLogs();
  const dropped: DropReason[] = [];
  const outbox = outboxOf({
    store: world.store,
    posterOf: extra.posterOf ?? (async () => world.poster),
    logger: logs.logger,
    clock: () => world.clock.now,
    owner: extra.owner ?? 'a',
    ...(extra.leaseMs ? { leaseMs: extra.leaseMs } : {}),
    onUndeliverable: async (row) => {
      extra.undeliverable?.push(row);
    },
    onDropped: (reason) => dropped.push(reason),
    ...(extra.mayDeliver ? { mayDeliver: extra.mayDeliver } : {}),
  });
  return { outbox, logs, dropped };
}

/** Every message in the outbox, oldest first. */
export const outboxRows = (world: OutboxWorld) =>
  world.store.db.selectFrom('outbox').selectAll().orderBy('id').execute();

/** Decides `entries` now, for `installation` (the one workspace unless told). */
export const decide = (
  world: OutboxWorld,
  entries: Parameters<typeof enqueue>[1],
  installation: InstallationId = ONE_WORKSPACE,
) => world.store.transaction((trx) => enqueue(trx, entries, world.clock.now, installation));

/** Claims and runs the one message due now. */
export async function runOutboxOnce(world: OutboxWorld, outbox: ReturnType<typeof outboxJob>['outbox']) {
  const [row] = await outbox.claim(world.clock.now, 1);
  if (!row) throw new Error('nothing due');
  return outbox.run(row);
}
