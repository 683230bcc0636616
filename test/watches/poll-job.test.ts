import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { LEASE_MS, leased } from '../../src/scheduler.js';
import { serviceState } from '../../src/service-state.js';
import { installationId, ONE_WORKSPACE } from '../../src/store/keys.js';
import { createWatches, watchPollJob } from '../../src/watches/service.js';
import { captureLogs, HOME_TEAM, TEST_WATCH_SETTINGS } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { NOW } from '../support/factories.js';
import { recordingPoster } from '../support/fake-slack.js';
import { RETENTION_DAYS, servingAll, servingNone } from '../support/jobs.js';
import { useSandbox } from '../support/use-sandbox.js';

/** The watch poll job as the scheduler runs it: what it does with an installation it cannot serve, and how far ahead a check may be. */
const env = useSandbox();
const { open: OPEN } = DEMO_INVOICE_IDS;
const MINUTE = 60_000;

let now: number;
beforeEach(async () => {
  now = NOW.getTime();
  await emptyWork(env.store);
  env.sandbox.reset();
});

/** A watch of the open invoice, started by installation T0A. */
async function watched() {
  const logs = captureLogs();
  const watches = createWatches({
    store: env.store,
    payments: env.deps().payments,
    poster: recordingPoster(),
    state: serviceState(env.store, logs.logger, { installation: ONE_WORKSPACE }),
    logger: logs.logger,
    clock: () => now,
    settings: TEST_WATCH_SETTINGS,
    installation: installationId('T0A'),
  });
  await watches.start({ teamId: HOME_TEAM, channelId: 'C0ONE', userId: 'U0WATCHER', invoiceId: OPEN });
  return watches;
}

const job = (watchesOf: Parameters<typeof watchPollJob>[0]['watchesOf'], pollSeconds = 30) =>
  leased(
    watchPollJob({
      store: env.store,
      gate: serviceState(env.store, captureLogs().logger, { installation: ONE_WORKSPACE }),
      pollSeconds,
      endedRetentionDays: RETENTION_DAYS,
      watchesOf,
    }),
    { owner: 'instance-1', ms: LEASE_MS },
    () => now,
  );

const nextPollAt = async () =>
  Number(
    (await env.store.db.selectFrom('watched_invoices').select('next_poll_at').executeTakeFirstOrThrow())
      .next_poll_at,
  );

describe('the watch poll job', () => {
  it('gives the check of an installation it cannot serve back for a minute, naming its invoice, and checks it then', async () => {
    const watches = await watched();
    now += MINUTE;
    const unserved = job(servingNone);
    const [row] = await unserved.claim(now, 10);
    if (!row) throw new Error('a due check');
    expect(await unserved.run(row)).toEqual({ outcome: 'paused', invoiceId: OPEN });
    expect(await nextPollAt()).toBe(now + MINUTE);
    expect(await unserved.claim(now + MINUTE - 1, 10)).toEqual([]);

    const served = job(servingAll(watches));
    const [again] = await served.claim(now + MINUTE, 10);
    expect(again?.invoice_id).toBe(OPEN);
  });

  it('leaves a check its cadence put up to WATCH_POLL_SECONDS ahead where it is, and pulls back one further than any schedule puts it', async () => {
    await watched();
    const at = (ms: number) =>
      env.store.db.updateTable('watched_invoices').set({ next_poll_at: ms }).execute();
    await at(now + 10 * MINUTE);
    await job(servingNone, 600).claim(now, 10);
    expect(await nextPollAt()).toBe(now + 10 * MINUTE);

    await at(now + 12 * MINUTE);
    await job(servingNone, 600).claim(now, 10);
    expect(await nextPollAt()).toBe(now);
  });
});
