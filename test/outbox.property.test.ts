import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DropReason, enqueue, MAX_BACKOFF_MS, outboxBacklog } from '../src/outbox.js';
import { createSlackPoster, type SlackPoster } from '../src/slack/poster.js';
import { openStore, type Store } from '../src/store/database.js';
import { installationId } from '../src/store/keys.js';
import { captureLogs } from './support/bolt.js';
import { outboxOf } from './support/jobs.js';
import { answerArb, meaning } from './support/slack-answers.js';
import { type Answer, type SlackModel, slackModel } from './support/slack-model.js';

/**
 * The outbox's promise, tried against random histories: messages and edits decided in several
 * threads of two workspaces; Slack answering each call of the outbox (chat.postMessage,
 * chat.update, conversations.history and .replies) in every way its pages document (ok, each
 * temporary code, permanent codes, an HTTP 429 or 5xx, no answer, a post carried out but its
 * answer lost); Slack's clock a little or a few minutes off the bot's; instances crashing before
 * or after a post and the next one starting from the store. Slack's answers go through the real
 * poster, so its reading of each code is what is tried. Afterwards every message Slack did not
 * refuse for good has been posted exactly once, each edit applied, and each thread's messages in
 * the order they were decided. The one documented exception is checked too: where the bot may not
 * look for a post whose answer was lost (a public channel it has not joined, a DM addressed by
 * user id, a missing scope), it posts again, so the message may show twice, never fewer than once.
 */

const T0 = Date.parse('2026-11-21T08:00:00Z');
const LEASE_MS = 30_000;

/**
 * Where messages go: three threads the bot may read, two conversations it may not, and a channel
 * of another workspace, whose messages share the outbox's slots with the first's.
 */
const LANES = [
  { channel: 'C0READ', threadTs: undefined },
  { channel: 'C0READ', threadTs: '1700000000.000001' },
  { channel: 'C0READ', threadTs: '1700000000.000002' },
  { channel: 'C0PUBLIC', threadTs: '1700000000.000003' },
  { channel: 'U0SUBSCRIBER', threadTs: undefined },
  { channel: 'C0OTHER', threadTs: undefined },
] as const;
const UNREADABLE = { C0PUBLIC: 'not_in_channel', U0SUBSCRIBER: 'channel_not_found' };
const installationOf = (channel: string) => installationId(channel === 'C0OTHER' ? 'T0OTHER' : '');

type Crash = 'claimed' | 'before_post' | 'after_post';
type Step =
  | { kind: 'enqueue'; lane: number; count: number }
  | { kind: 'edit'; pick: number }
  | { kind: 'answers'; answers: Answer[] }
  | { kind: 'archive'; channel: 'C0READ' | 'C0PUBLIC' }
  | { kind: 'crash'; when: Crash }
  | { kind: 'tick'; advanceMs: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('enqueue' as const),
      lane: fc.nat(LANES.length - 1),
      count: fc.integer({ min: 1, max: 3 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('edit' as const), pick: fc.nat() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('answers' as const),
      answers: fc.array(answerArb, { minLength: 1, maxLength: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('archive' as const),
      channel: fc.constantFrom('C0READ' as const, 'C0PUBLIC' as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('crash' as const),
      when: fc.constantFrom<Crash>('claimed', 'before_post', 'after_post'),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('tick' as const),
      advanceMs: fc.integer({ min: 0, max: 10 * 60_000 }),
    }),
  },
);

/** Slack's clock minus the bot's: a second or two either way, or minutes. */
const skewArb = fc.oneof(fc.integer({ min: -3000, max: 3000 }), fc.integer({ min: -240_000, max: 240_000 }));

/** The instance died here: not a Slack failure, so the outbox lets it through, as a crash would end it. */
class Died extends Error {}

/** The real poster over the model, which can die just before or just after a post goes out. */
function dyingPoster(slack: SlackModel) {
  const poster = createSlackPoster(slack.client);
  let dieAt: Crash | undefined;
  const dying: SlackPoster = {
    ...poster,
    async find(where) {
      slack.lookFor(where.messageId);
      return poster.find(where);
    },
    async post(message) {
      if (dieAt === 'before_post') throw new Died();
      if (dieAt !== 'after_post') return poster.post(message);
      const id = message.messageId ?? '';
      const [posted, refused] = [slack.isPosted(id), slack.refused.has(id)];
      await poster.post(message).catch(() => undefined);
      if (!posted && slack.isPosted(id)) slack.unconfirmed.add(id);
      // A refusal the bot died before hearing refuses nothing: the next instance asks again.
      if (!refused) slack.refused.delete(id);
      throw new Died();
    },
  };
  return { poster: dying, dying: (when: Crash | undefined) => (dieAt = when) };
}

let store: Store;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bot-outbox-property-'));
  store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What was decided: a post in a lane, or an edit of a posted message. */
type Decided =
  | { text: string; lane: number; edits?: undefined }
  | { text: string; lane?: undefined; edits: { ts: string } };

async function play(script: readonly Step[], skewMs: number) {
  await store.db.deleteFrom('outbox').execute();
  const clock = { now: T0 };
  const slack = slackModel({ clock: () => clock.now + skewMs, unreadable: UNREADABLE, meaning });
  const { poster, dying } = dyingPoster(slack);
  const dropped: DropReason[] = [];
  let instances = 0;
  const start = () => {
    instances += 1;
    return outboxOf({
      store,
      posterOf: async () => poster,
      logger: captureLogs().logger,
      clock: () => clock.now,
      owner: `instance-${instances}`,
      leaseMs: LEASE_MS,
      onDropped: (reason) => dropped.push(reason),
    });
  };
  let outbox = start();
  const decided: Decided[] = [];
  let crash: Crash | undefined;

  /** Delivers what is due now, one message after another, as the scheduler would. */
  const deliverDue = async () => {
    let ran = 0;
    for (
      let batch = await outbox.claim(clock.now, 4);
      batch.length > 0;
      batch = await outbox.claim(clock.now, 4)
    ) {
      for (const row of batch) await outbox.run(row);
      ran += batch.length;
    }
    return ran;
  };
  /** The instance takes one message and dies with it: before running it, before its post goes out, or after. */
  const crashNow = async (when: Crash) => {
    const [row] = await outbox.claim(clock.now, 1);
    if (row && when !== 'claimed') {
      dying(when);
      // It may not get as far as a post: an earlier attempt found, or Slack failing the look for it.
      await outbox.run(row).catch((error: unknown) => {
        if (!(error instanceof Died)) throw error;
      });
      dying(undefined);
    }
    outbox = start();
    clock.now += LEASE_MS + 1;
  };

  for (const step of script) {
    if (step.kind === 'enqueue' || step.kind === 'edit') await decide(step, slack, decided, clock.now);
    else if (step.kind === 'answers') slack.answers.push(...step.answers);
    else if (step.kind === 'archive') slack.archived.add(step.channel);
    else if (step.kind === 'crash') crash = step.when;
    else {
      clock.now += step.advanceMs;
      if (crash) await crashNow(crash);
      else await deliverDue();
      crash = undefined;
    }
  }

  // Slack answers again: whatever is left goes out, waiting only as long as the backoff says.
  slack.answers.length = 0;
  for (let round = 0; round < 100 && (await outboxBacklog(store)).pending > 0; round += 1) {
    if ((await deliverDue()) === 0) clock.now += MAX_BACKOFF_MS;
  }
  return { slack, decided, dropped, elapsedMs: clock.now - T0 };
}

/** Writes a decided message, or an edit of one Slack shows, to the outbox. */
async function decide(
  step: Step & { kind: 'enqueue' | 'edit' },
  slack: SlackModel,
  decided: Decided[],
  now: number,
) {
  const message = (text: string) => ({
    text,
    blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text } }],
  });
  if (step.kind === 'edit') {
    const target = slack.posted[step.pick % Math.max(1, slack.posted.length)];
    if (!target) return;
    const text = `e${decided.length}`;
    decided.push({ text, edits: { ts: target.ts } });
    const entry = { channel: target.channel, ts: target.ts, message: message(text) };
    await store.transaction((trx) => enqueue(trx, [entry], now, installationOf(target.channel)));
    return;
  }
  const lane = LANES[step.lane] ?? LANES[0];
  const entries = Array.from({ length: step.count }, () => {
    const text = `m${decided.length}`;
    decided.push({ text, lane: step.lane });
    return { channel: lane.channel, threadTs: lane.threadTs, message: message(text) };
  });
  await store.transaction((trx) => enqueue(trx, entries, now, installationOf(lane.channel)));
}

/** Our id of each decided text, as the outbox puts it in the message's metadata. */
async function idsByText(): Promise<Map<string, string>> {
  const rows = await store.db.selectFrom('outbox').select(['id', 'message']).execute();
  return new Map(rows.map((r) => [(JSON.parse(r.message) as { text: string }).text, `outbox-${r.id}`]));
}

/** First appearances, in order. */
const firsts = (texts: string[]) => [...new Set(texts)];

async function expectPromiseKept({ slack, decided, dropped }: Awaited<ReturnType<typeof play>>) {
  const ids = await idsByText();
  const idOf = (text: string) => ids.get(text) ?? 'unknown';
  const times = (text: string) => slack.posted.filter((m) => m.text === text).length;
  for (const d of decided) {
    const id = idOf(d.text);
    const refused = slack.refused.has(id);
    if (d.edits) {
      // Applied unless refused for good (once or more: an edit whose answer was lost is made again).
      const applied = slack.posted.some((m) => m.ts === d.edits.ts && m.edits.includes(d.text));
      if (!refused) expect(applied, d.text).toBe(true);
      continue;
    }
    // Refused for good: not posted, unless an earlier post went out though its answer was lost.
    const once = refused && !slack.unconfirmed.has(id) ? 0 : 1;
    if (slack.mayRepeat.has(id)) expect(times(d.text), d.text).toBeGreaterThanOrEqual(once);
    else expect(times(d.text), d.text).toBe(once);
  }
  // Each thread's messages appear in the order they were decided, and each message's edits too.
  LANES.forEach((lane, index) => {
    const wanted = decided.filter((d) => d.lane === index && times(d.text) > 0).map((d) => d.text);
    const seen = slack.posted.filter((m) => m.channel === lane.channel && m.threadTs === lane.threadTs);
    expect(firsts(seen.map((m) => m.text)), `${lane.channel} ${lane.threadTs ?? ''}`).toEqual(wanted);
  });
  for (const m of slack.posted) {
    const wanted = decided.filter((d) => d.edits?.ts === m.ts && m.edits.includes(d.text)).map((d) => d.text);
    expect(firsts(m.edits), m.ts).toEqual(wanted);
  }
  // Only refusals dropped anything, and each was counted.
  expect(dropped.length).toBe(decided.filter((d) => slack.refused.has(idOf(d.text))).length);
  expect(dropped).not.toContain('gave_up');
}

describe('the outbox, over random histories of Slack’s answers, clocks and crashes', () => {
  it('delivers every message Slack did not refuse for good exactly once, in order within its thread', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 60 }),
        skewArb,
        async (script, skewMs) => {
          const result = await play(script, skewMs);
          expect(await outboxBacklog(store)).toEqual({ pending: 0, oldestAt: undefined });
          // Well within the day a message is retried for: nothing was given up for waiting.
          expect(result.elapsedMs).toBeLessThan(24 * 3_600_000);
          await expectPromiseKept(result);
        },
      ),
      { numRuns: 200 },
    );
  }, 120_000);
});
