import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery, type KyselyPlugin } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { feedJobs } from '../../src/feed/jobs.js';
import { feedQueries } from '../../src/feed/queries.js';
import { serviceState } from '../../src/service-state.js';
import { openStore, type Store } from '../../src/store/database.js';
import { installationId, ONE_WORKSPACE } from '../../src/store/keys.js';
import { PRUNE_BATCH, PRUNE_BATCHES_PER_CALL, pruneEnded } from '../../src/store/retention.js';
import { watchQueries } from '../../src/watches/queries.js';
import { checkClaims } from '../../src/watches/queries-checks.js';
import { watchPollJob } from '../../src/watches/service.js';
import { recordState } from '../../src/watches/states-seen.js';
import { captureLogs } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { endingRows, idsIn } from '../support/ending-rows.js';
import { NOW } from '../support/factories.js';
import { servingNone } from '../support/jobs.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * Ended watches and feeds are kept ENDED_RETENTION_DAYS, then deleted by the jobs that run
 * anyway (the watch poll, the feed digest); counting and listing what is active reads no ended row.
 */
const env = useSandbox();
const now = NOW.getTime();
const HOUR = 3_600_000;

beforeEach(async () => {
  await emptyWork(env.store);
  await env.store.db.deleteFrom('watches').execute();
  await env.store.db.deleteFrom('feed_subscriptions').execute();
});

const gate = () => serviceState(env.store, captureLogs().logger, { installation: ONE_WORKSPACE });
const watchJob = (days: number) =>
  watchPollJob({
    store: env.store,
    gate: gate(),
    pollSeconds: 30,
    endedRetentionDays: days,
    watchesOf: servingNone,
  });
const digestJob = (days: number) =>
  feedJobs({
    store: env.store,
    gate: gate(),
    pollSeconds: 60,
    endedRetentionDays: days,
    feedOf: async () => undefined,
    digestsOf: async () => undefined,
  }).digest;
const lease = { owner: 'a', ms: 30_000 };

describe.each([
  ['watches', watchJob],
  ['feed_subscriptions', digestJob],
] as const)('ended %s', (table, job) => {
  it('are deleted once they ended more than ENDED_RETENTION_DAYS ago, at the job’s next claim; active and recent ones stay', async () => {
    await endingRows(env.store, table, now, { a: 'active', b: 29, c: 31, d: 400 });
    const task = job(30);
    await task.claim(now, 10, lease, new Map());
    expect(await idsIn(env.store, table)).toEqual(['a', 'b']);

    // Looked at once an hour: e waits for the next look; b goes once it ended more than 30 days ago.
    await endingRows(env.store, table, now, { e: 31 });
    await task.claim(now + HOUR / 2, 10, lease, new Map());
    expect(await idsIn(env.store, table)).toEqual(['a', 'b', 'e']);
    await task.claim(now + 25 * HOUR, 10, lease, new Map());
    expect(await idsIn(env.store, table)).toEqual(['a']);
  });

  it('are kept as long as ENDED_RETENTION_DAYS says', async () => {
    await endingRows(env.store, table, now, { c: 31, d: 400 });
    await job(365).claim(now, 10, lease, new Map());
    expect(await idsIn(env.store, table)).toEqual(['c']);
  });
});

describe('what /metrics and the App Home read', () => {
  /** How SQLite runs each statement `read` makes: the plan of each, joined. */
  async function plansOf(read: (store: Store) => Promise<unknown>, on: Store = env.store): Promise<string> {
    const made: CompiledQuery[] = [];
    const recorder: KyselyPlugin = {
      transformQuery: ({ node, queryId }) => {
        made.push(on.db.getExecutor().compileQuery(node, queryId));
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    await read({ ...on, db: on.db.withPlugin(recorder) });
    const plans = [];
    for (const q of made)
      plans.push(
        await on.db.executeQuery(CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters])),
      );
    return plans.flatMap((p) => p.rows.map((r) => (r as { detail: string }).detail)).join('\n');
  }

  it.each([
    [
      '/metrics: the active watches',
      (store: Store) => checkClaims(store).countAllActive(),
      'watches_by_state',
    ],
    [
      'the App Home: a person’s watches',
      (store: Store) => watchQueries(store, installationId('T0A')).listStartedBy('T0A', 'U0'),
      'watches_by_state',
    ],
    [
      'the App Home: the feeds',
      (store: Store) => feedQueries(store, installationId('T0A')).listInTeam('T0A'),
      'feed_subscriptions_by_state',
    ],
  ])('%s: by an index, not by reading every row', async (_what, read, index) => {
    const plan = await plansOf(read);
    expect(plan).toContain(index);
    expect(plan).not.toMatch(/^SCAN (watches|feed_subscriptions)$/m);
  });

  it('a check that saw a new state forgets the states seen long ago by their age’s index, not by reading every state kept', async () => {
    // A store of its own: SQLite's plan of a DELETE, once asked for, leaves its kept statement open.
    const store = await openStore({
      kind: 'sqlite',
      path: join(mkdtempSync(join(tmpdir(), 'states-')), 'bot.sqlite'),
    });
    const state = { id: 'I-1', status: 'paid', payStatus: 'paid' };
    const plan = await plansOf((s) => recordState(s.db, installationId('T0A'), state, NOW.getTime()), store);
    expect(plan).toContain('invoice_states_seen_by_age (installation_id=? AND seen_at<?)');
    await store.close();
  });
});

describe('a long backlog of ended rows', () => {
  it('is deleted over several claims, at most PRUNE_BATCHES_PER_CALL statements each, none of it waiting an hour', async () => {
    const total = PRUNE_BATCH * PRUNE_BATCHES_PER_CALL + 5;
    const rows = Object.fromEntries(Array.from({ length: total }, (_, i) => [`old-${i}`, 400] as const));
    await env.store.transaction((trx) => endingRows({ db: trx } as Store, 'watches', now, rows));
    const prune = pruneEnded(env.store, 'watches', 30);
    expect(await prune(now)).toBe(PRUNE_BATCH * PRUNE_BATCHES_PER_CALL);
    expect(await prune(now + 1)).toBe(5);
    expect(await prune(now + 2)).toBe(0);
    expect(await env.store.db.selectFrom('watches').select('id').execute()).toEqual([]);
  }, 30_000);
});
