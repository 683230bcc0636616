import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DropReason, enqueue, MAX_BACKOFF_MS, outboxBacklog, outboxJob } from '../src/outbox.js';
import { SlackPostError } from '../src/slack/calls.js';
import type { OutgoingMessage, SlackPoster } from '../src/slack/poster.js';
import { openStore, type Store } from '../src/store/database.js';
import { captureLogs } from './support/bolt.js';

/**
 * The outbox's promise, tried against random histories: messages decided in several threads of
 * two workspaces, Slack failing in every way it can (down before taking anything, a post whose
 * answer is lost, a 429, a message refused, a channel archived), instances crashing before or
 * after a post and the next one starting from the store, and Slack answering in between.
 * Afterwards every message Slack did not refuse for good has been posted exactly once, and each
 * thread's messages in the order they were decided. The one documented exception is checked too:
 * where the bot may not read the conversation (a public channel it has not joined, a DM addressed
 * by user id), a post whose answer was lost is posted again, so it may show twice, never fewer
 * than once.
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
  { channel: 'C0OTHER', threadTs: undefined, installation: 'T0OTHER' },
] as const;
const UNREADABLE: Record<string, string> = { C0PUBLIC: 'not_in_channel', U0SUBSCRIBER: 'channel_not_found' };

/** How Slack fails the next call. */
type Fault = 'down' | 'lost' | 'ratelimited' | 'refuse';
type Crash = 'claimed' | 'before_post' | 'after_post';
type Step =
  | { kind: 'enqueue'; lane: number; count: number }
  | { kind: 'fault'; fault: Fault; times: number }
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
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('fault' as const),
      fault: fc.constantFrom<Fault>('down', 'lost', 'ratelimited', 'refuse'),
      times: fc.integer({ min: 1, max: 4 }),
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

/** The instance died here: not a Slack failure, so the outbox lets it through, as a crash would end it. */
class Died extends Error {}

/** Slack as the outbox sees it: what was posted where, and the failures the script asks for. */
function modelSlack() {
  const posted: (OutgoingMessage & { ts: string })[] = [];
  const faults: Fault[] = [];
  const archived = new Set<string>();
  /** Messages (by text) Slack refused for good. */
  const refused = new Set<string>();
  /** Messages (by text) posted with their answer lost where the bot may not look: they may show twice. */
  const unconfirmedWhereUnreadable = new Set<string>();
  let dieAt: Crash | undefined;

  const poster: SlackPoster = {
    async post(message) {
      if (dieAt === 'before_post') throw new Died();
      const fault = faults.shift();
      if (fault === 'down') throw new SlackPostError('transient', undefined);
      if (fault === 'ratelimited') throw new SlackPostError('rate_limited', 'ratelimited', 1000);
      if (archived.has(message.channel)) {
        refused.add(message.text);
        throw new SlackPostError('not_in_channel', 'is_archived');
      }
      if (fault === 'refuse') {
        refused.add(message.text);
        throw new SlackPostError('refused', 'invalid_blocks');
      }
      const ts = `1700000001.${String(posted.length).padStart(6, '0')}`;
      posted.push({ ...message, ts });
      if (fault === 'lost' || dieAt === 'after_post') {
        if (message.channel in UNREADABLE) unconfirmedWhereUnreadable.add(message.text);
        if (dieAt === 'after_post') throw new Died();
        throw new SlackPostError('transient', undefined);
      }
      return ts;
    },
    async update() {
      throw new Error('the script posts only');
    },
    async remove() {
      throw new Error('the script posts only');
    },
    async find({ channel, threadTs, messageId }) {
      const fault = faults.shift();
      if (fault === 'ratelimited') throw new SlackPostError('rate_limited', 'ratelimited', 1000);
      if (fault) throw new SlackPostError('transient', undefined);
      const code = UNREADABLE[channel];
      if (code) throw new SlackPostError('not_in_channel', code);
      return posted.find((m) => m.channel === channel && m.threadTs === threadTs && m.messageId === messageId)
        ?.ts;
    },
    async conversation() {
      throw new Error('not asked by the outbox');
    },
  };
  return {
    poster,
    posted,
    faults,
    archived,
    refused,
    unconfirmedWhereUnreadable,
    dying(when: Crash | undefined) {
      dieAt = when;
    },
  };
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

async function play(script: readonly Step[]) {
  await store.db.deleteFrom('outbox').execute();
  const slack = modelSlack();
  const clock = { now: T0 };
  const dropped: DropReason[] = [];
  let instances = 0;
  const start = () => {
    instances += 1;
    return outboxJob({
      store,
      posterOf: async () => slack.poster,
      logger: captureLogs().logger,
      clock: () => clock.now,
      owner: `instance-${instances}`,
      leaseMs: LEASE_MS,
      onDropped: (reason) => dropped.push(reason),
    });
  };
  let outbox = start();
  /** Every message decided, in order, with where it went. */
  const decided: { text: string; lane: number }[] = [];
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

  for (const step of script) {
    switch (step.kind) {
      case 'enqueue': {
        const lane = LANES[step.lane] ?? LANES[0];
        const entries = Array.from({ length: step.count }, () => {
          const text = `m${decided.length}`;
          decided.push({ text, lane: step.lane });
          return {
            channel: lane.channel,
            threadTs: lane.threadTs,
            message: {
              text,
              blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text } }],
            },
          };
        });
        const installation = 'installation' in lane ? lane.installation : '';
        await store.transaction((trx) => enqueue(trx, entries, clock.now, installation));
        break;
      }
      case 'fault':
        for (let i = 0; i < step.times; i += 1) slack.faults.push(step.fault);
        break;
      case 'archive':
        slack.archived.add(step.channel);
        break;
      case 'crash':
        crash = step.when;
        break;
      case 'tick': {
        clock.now += step.advanceMs;
        if (!crash) {
          await deliverDue();
          break;
        }
        // The instance takes one message and dies with it: before running it, before its post
        // goes out, or after it went out but before it was recorded. The next starts from the store.
        const [row] = await outbox.claim(clock.now, 1);
        if (row && crash !== 'claimed') {
          slack.dying(crash);
          // It may not get as far as a post: an earlier attempt found, or Slack failing the look for it.
          await outbox.run(row).catch((error: unknown) => {
            if (!(error instanceof Died)) throw error;
          });
          slack.dying(undefined);
        }
        crash = undefined;
        outbox = start();
        clock.now += LEASE_MS + 1;
        break;
      }
    }
  }

  // Slack answers again: whatever is left goes out, waiting only as long as the backoff says.
  slack.faults.length = 0;
  for (let round = 0; round < 100 && (await outboxBacklog(store)).pending > 0; round += 1) {
    if ((await deliverDue()) === 0) clock.now += MAX_BACKOFF_MS;
  }
  return { slack, decided, dropped, elapsedMs: clock.now - T0 };
}

describe('the outbox, over random histories of failures, refusals and crashes', () => {
  it('delivers every message Slack did not refuse exactly once, in order within its thread', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 60 }), async (script) => {
        const { slack, decided, dropped, elapsedMs } = await play(script);
        expect(await outboxBacklog(store)).toEqual({ pending: 0, oldestAt: undefined });
        // Well within the day a message is retried for: nothing was given up for waiting.
        expect(elapsedMs).toBeLessThan(24 * 3_600_000);
        expect(dropped).not.toContain('gave_up');

        const times = (text: string) => slack.posted.filter((m) => m.text === text).length;
        for (const { text } of decided) {
          const excused = slack.unconfirmedWhereUnreadable.has(text);
          if (slack.refused.has(text)) {
            // Refused for good: not posted, unless an earlier post went out unconfirmed where it could not be looked for.
            if (excused) expect(times(text), text).toBeGreaterThanOrEqual(1);
            else expect(times(text), text).toBe(0);
          } else if (excused) {
            expect(times(text), text).toBeGreaterThanOrEqual(1);
          } else {
            expect(times(text), text).toBe(1);
          }
        }
        // Each thread's messages appear in the order they were decided (first appearances).
        LANES.forEach((lane, index) => {
          const wanted = decided.filter((d) => d.lane === index && times(d.text) > 0).map((d) => d.text);
          const seen = slack.posted
            .filter((m) => m.channel === lane.channel && m.threadTs === lane.threadTs)
            .map((m) => m.text);
          expect([...new Set(seen)], `${lane.channel} ${lane.threadTs ?? ''}`).toEqual(wanted);
        });
        // Only refusals dropped anything, and each was counted.
        expect(dropped.length).toBe(decided.filter((d) => slack.refused.has(d.text)).length);
      }),
      { numRuns: 100 },
    );
  }, 120_000);
});
