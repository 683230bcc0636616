import { beforeEach, describe, expect, inject, it } from 'vitest';
import { type Invoice, InvoiceNotFoundError, type PaymentsClient } from '../../src/payments/index.js';
import { serviceState } from '../../src/service-state.js';
import { openStore, type Store } from '../../src/store/database.js';
import { ONE_WORKSPACE } from '../../src/store/keys.js';
import { createWatches, type StartRequest, type WatchDeps } from '../../src/watches/service.js';
import { visibleText } from '../support/block-kit.js';
import { captureLogs, HOME_TEAM, TEST_WATCH_SETTINGS } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { INVOICE_ID, invoice, invoiceId, NOW } from '../support/factories.js';
import { latest, type RecordingPoster, recordingPoster } from '../support/fake-slack.js';
import { type Leasing, outboxOf, watchJob } from '../support/jobs.js';
import { PauseAfter, pausable } from '../support/pause-plugin.js';
import { freshDatabase } from '../support/postgres-server.js';

/**
 * A Stop that lands while another instance starts a watch of the same invoice: the invoice stays
 * polled for the new watch.
 *
 * A Stop that lands while a check of the same invoice is under way, on PostgreSQL, where the
 * two run side by side (read committed): the check has read the watch as active, the Stop
 * commits, then the check writes. The stopped watch must stay stopped: its card not edited back
 * to "Watched since … Stop watching", its thread not told "changed" after "stopped by".
 */

const url = await freshDatabase(inject('postgresUrl'));
const store = await openStore({ kind: 'postgres', url });
/** Another instance's store: its own connections to the same database. */
const otherStore = await openStore({ kind: 'postgres', url });

/** Holds back the result of the next read of active watches (a claim's): its check is then between its read and its write. */
const pause = new PauseAfter(
  (node, text) =>
    node.kind === 'SelectQueryNode' &&
    text.includes('"name":"watches"') &&
    text.includes('"active"') &&
    !text.includes('ForUpdate'),
);
/** The checking instance's view of the store: its reads of active watches can be held back. */
const checkersStore = pausable(store, pause);

let clock: { now: number };
let poster: RecordingPoster;
/** What the payment service answers for the invoice: the invoice, or that it no longer exists. */
let answer: () => Invoice;
const payments = {
  getInvoice: async () => answer(),
} as unknown as PaymentsClient;

/** What one instance's watches are built with. */
const depsOf = (name: string, on: Store): WatchDeps & Leasing => {
  const logs = captureLogs();
  return {
    store: on,
    payments,
    poster,
    state: serviceState(on, logs.logger, { installation: ONE_WORKSPACE }),
    logger: logs.logger,
    clock: () => clock.now,
    settings: TEST_WATCH_SETTINGS,
    owner: name,
    installation: ONE_WORKSPACE,
  };
};
const instance = (name: string, on: Store) => createWatches(depsOf(name, on));

const SUPPORT = 'C0SUPPORT';
const FINANCE = 'C0FINANCE';
const request = (channelId: string): StartRequest => ({
  teamId: HOME_TEAM,
  channelId,
  userId: 'U0WATCHER',
  invoiceId: invoiceId(INVOICE_ID),
});

async function deliverAll() {
  const outbox = outboxOf({
    store,
    posterOf: async () => poster,
    logger: captureLogs().logger,
    clock: () => clock.now,
    owner: 'outbox',
  });
  for (
    let batch = await outbox.claim(clock.now, 10);
    batch.length > 0;
    batch = await outbox.claim(clock.now, 10)
  )
    for (const row of batch) await outbox.run(row);
}

const cardIn = (channel: string) => {
  const [card] = poster.repliesIn(channel);
  if (!card) throw new Error(`no card in ${channel}`);
  return card;
};
const thread = (channel: string) => poster.repliesIn(channel, cardIn(channel).ts).map((m) => visibleText(m));

/**
 * Watches in two channels; the invoice becomes what `then` answers; a check of it held between its read and its write while
 * the support channel's watch is stopped by another instance (committed); then the check goes on.
 */
async function stopDuringCheck(then: () => Invoice): Promise<unknown> {
  const checkerDeps = depsOf('checker', checkersStore);
  const checker = createWatches(checkerDeps);
  const other = instance('other', store);
  await other.start(request(SUPPORT));
  await other.start(request(FINANCE));
  answer = then;
  clock.now += 31_000;
  const poll = watchJob(checkerDeps, checker);
  // The check reads its watches with its claim.
  const release = pause.arm();
  const claiming = poll.claim(clock.now, 10);
  await pause.reached;
  const [watch] = await other.list(SUPPORT);
  expect(await other.stop(watch?.id ?? '', 'U0STOPPER')).toMatchObject({ kind: 'stopped' });
  release();
  const [row] = await claiming;
  if (!row) throw new Error('no check due');
  const result = await poll.run(row);
  await deliverAll();
  return result;
}

beforeEach(async () => {
  await emptyWork(store);
  clock = { now: NOW.getTime() };
  poster = recordingPoster();
  answer = () => invoice();
});

describe('a Stop committed while a check is between its read and its write, on PostgreSQL', () => {
  it('a change: the stopped watch’s card stays stopped and its thread ends with "stopped by"; the other is told', async () => {
    expect(await stopDuringCheck(() => invoice({ payStatus: 'partially_paid' }))).toMatchObject({
      outcome: 'changed',
    });

    expect(thread(SUPPORT)).toEqual([
      expect.stringContaining('No longer watching *Order #1042*: stopped by <@U0STOPPER>'),
    ]);
    const stopped = visibleText(latest(cardIn(SUPPORT)));
    expect(stopped).toContain('No longer watched since');
    expect(JSON.stringify(latest(cardIn(SUPPORT)).blocks)).not.toContain('stop_watch');

    expect(thread(FINANCE)).toEqual([expect.stringContaining('*Payment*: Not paid → Partially paid')]);
    expect(visibleText(latest(cardIn(FINANCE)))).toContain('Watched since');
    // The check queued nothing for the stopped watch: only the Stop's card edit and reply.
    const [support] = await store.db
      .selectFrom('watches')
      .select('id')
      .where('channel_id', '=', SUPPORT)
      .execute();
    const queued = await store.db
      .selectFrom('outbox')
      .select('method')
      .where('watch_id', '=', support?.id ?? '')
      .execute();
    expect(queued.map((r) => r.method).sort()).toEqual(['chat.postMessage', 'chat.update']);
  });

  it('the invoice gone: the stopped watch is told it ended once, by its Stop; the other is told why it ended', async () => {
    const gone = () => {
      throw new InvoiceNotFoundError(INVOICE_ID, { status: 404 });
    };
    expect(await stopDuringCheck(gone)).toMatchObject({ outcome: 'ended' });

    expect(thread(SUPPORT)).toEqual([expect.stringContaining('stopped by <@U0STOPPER>')]);
    expect(visibleText(latest(cardIn(SUPPORT)))).toContain('stopped by <@U0STOPPER>');
    expect(thread(FINANCE)).toEqual([
      expect.stringContaining('the payment service no longer knows this invoice'),
    ]);
    expect(await store.db.selectFrom('watched_invoices').selectAll().execute()).toEqual([]);
  });
});

describe('a Stop in one channel while another channel starts a watch of the same invoice, on PostgreSQL', () => {
  it('keeps the invoice checked for the new watch: its payment is told in its thread', async () => {
    // The start is held right after it stored its watch and the invoice to poll, uncommitted.
    const stored = new PauseAfter(
      (node, text) => node.kind === 'InsertQueryNode' && text.includes('"name":"watched_invoices"'),
    );
    const starter = createWatches(depsOf('starter', pausable(store, stored)));
    const stopper = instance('stopper', otherStore);
    await stopper.start(request(SUPPORT));
    const release = stored.arm();
    const starting = starter.start(request(FINANCE));
    await stored.reached;
    const [watch] = await stopper.list(SUPPORT);
    const stopping = stopper.stop(watch?.id ?? '', 'U0STOPPER');
    // The Stop finishes meanwhile or waits for the start to commit: time for whichever it does.
    await new Promise((resolve) => setTimeout(resolve, 300));
    release();
    expect(await stopping).toMatchObject({ kind: 'stopped' });
    expect(await starting).toMatchObject({ kind: 'started' });
    expect(await store.db.selectFrom('watched_invoices').select('invoice_id').execute()).toEqual([
      { invoice_id: INVOICE_ID },
    ]);

    answer = () => invoice({ payStatus: 'paid', status: 'closed' });
    clock.now += 31_000;
    const checkerDeps = depsOf('checker', store);
    const poll = watchJob(checkerDeps, createWatches(checkerDeps));
    const [row] = await poll.claim(clock.now, 10);
    if (!row) throw new Error('no check due');
    expect(await poll.run(row)).toMatchObject({ outcome: 'changed' });
    await deliverAll();
    expect(thread(FINANCE)).toEqual([expect.stringContaining('*Payment*: Not paid → Paid')]);
  });
});
