import { beforeEach, describe, expect, it } from 'vitest';
import { createAccess } from '../../src/access.js';
import { nextDigestAt } from '../../src/feed/schedule.js';
import { createBalanceCommand } from '../../src/listeners/commands/balance.js';
import { commandListener } from '../../src/pipeline/kinds.js';
import { createDirectory } from '../../src/slack/people.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { captureLogs, commandArgs, type DepsOptions, HOME_TEAM } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { NOW } from '../support/factories.js';
import { outboxOf, runDue } from '../support/jobs.js';
import { settingsListeners } from '../support/settings-modal.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * Issue 30, point 6: `/balance subscribe HH:MM [Area/City]` moves the digest of a channel that
 * has the feed, in place; a time typed without a zone is in the subscriber's own Slack time zone.
 */
const env = useSandbox();
const FINANCE = 'G0FINANCE';
const IN_KYIV: DepsOptions = {
  people: { U0ASKER: { teamId: HOME_TEAM, enterpriseId: undefined, timeZone: 'Europe/Kyiv' } },
};

beforeEach(async () => {
  await emptyWork(env.store);
  env.poster.conversations.set(FINANCE, { isPrivate: true, isDirect: false, isShared: false });
});

async function balance(text: string, opts: DepsOptions = {}) {
  const logs = captureLogs();
  const deps = env.deps({ ...opts, logger: logs.logger });
  const { args, rec } = commandArgs({ command: '/balance', text, channel_id: FINANCE });
  await commandListener(deps, '/balance', createBalanceCommand(deps))(args);
  const reply = rec.acks[0] ?? rec.responses[0];
  expectValidMessage(reply);
  return {
    text: visibleText(reply),
    outcome: logs.lines.find((l) => l.msg === 'command /balance')?.outcome,
    logs,
  };
}

const subscriptions = () =>
  env.store.db
    .selectFrom('feed_subscriptions')
    .select(['id', 'state', 'digest_hour', 'digest_minute', 'digest_zone', 'next_digest_at'])
    .execute();
/** What the channel reads once the bot's outbox has delivered what it holds, after the feed's first message. */
async function channelReads(): Promise<string[]> {
  const outbox = outboxOf({
    store: env.store,
    posterOf: async () => env.poster,
    logger: captureLogs().logger,
    clock: () => NOW.getTime(),
    owner: 'test',
  });
  await runDue([], outbox, NOW.getTime());
  return env.poster
    .repliesIn(FINANCE)
    .slice(1)
    .map((m) => visibleText(m));
}

describe('/balance subscribe on a channel that has the feed', () => {
  it('moves its digest in place: the same feed, the new time, the channel told who moved it', async () => {
    await balance('subscribe');
    const [before] = await subscriptions();
    const { text, outcome } = await balance('subscribe 08:30 Europe/Kyiv');
    expect(text).toBe(
      'Done: the payments feed goes on in this channel, with its digest every day at 08:30 Europe/Kyiv from now on (it was at 09:00 UTC).',
    );
    expect(outcome).toBe('ok');
    expect(await subscriptions()).toEqual([
      {
        id: before?.id,
        state: 'active',
        digest_hour: 8,
        digest_minute: 30,
        digest_zone: 'Europe/Kyiv',
        next_digest_at: nextDigestAt({ hour: 8, minute: 30, zone: 'Europe/Kyiv' }, NOW.getTime()),
      },
    ]);
    // Told once, after the feed's first message: nothing started again.
    expect(await channelReads()).toEqual([
      '<@U0ASKER> moved the daily balance digest of this channel to 08:30 Europe/Kyiv (it was at 09:00 UTC).',
    ]);
  });

  it('keeps it as it is when no time is given, or the same one', async () => {
    await balance('subscribe 08:30 Europe/Kyiv');
    for (const text of ['subscribe', 'subscribe 08:30 Europe/Kyiv']) {
      const again = await balance(text);
      expect(again.outcome).toBe('already_subscribed');
      expect(again.text).toContain(
        'with a digest every day at 08:30 Europe/Kyiv. `/balance subscribe HH:MM [Area/City]` moves the digest.',
      );
    }
    expect(await channelReads()).toEqual([]);
  });
});

describe('/balance subscribe HH:MM on a feed whose Settings changed its digest', () => {
  /** The feed on, its Settings saved with `edits` through the modal, then its digest moved to 08:30 in Kyiv. */
  async function movedAfter(edits: Record<string, string>) {
    await balance('subscribe');
    const { click, save } = settingsListeners(env.deps());
    const { opened } = await click(FINANCE);
    expect(opened && (await save(opened, edits)).outcome).toBe('ok');
    const { text, outcome } = await balance('subscribe 08:30 Europe/Kyiv');
    expect(outcome).toBe('ok');
    return { text, told: (await channelReads()).at(-1) };
  }

  it('says the weekly digest moved, on its day, to the person and the channel', async () => {
    const { text, told } = await movedAfter({ feed_digest: 'weekly', feed_weekday: '3' });
    expect(text).toBe(
      'Done: the payments feed goes on in this channel, with its weekly digest every Wednesday at 08:30 Europe/Kyiv from now on (it was at 09:00 UTC).',
    );
    expect(told).toBe(
      '<@U0ASKER> moved the weekly balance digest of this channel to Wednesdays at 08:30 Europe/Kyiv (it was at 09:00 UTC).',
    );
  });

  it('keeps the time of a digest that is off and says it stays off, never that a daily one moved', async () => {
    const { text, told } = await movedAfter({ feed_digest: 'off' });
    expect(text).toBe(
      'Done: the digest time of this channel is 08:30 Europe/Kyiv from now on (it was 09:00 UTC), but the digest is off in this feed’s Settings: turn it on there to receive it.',
    );
    expect(told).toBe(
      '<@U0ASKER> set the digest time of this channel to 08:30 Europe/Kyiv (it was 09:00 UTC); the digest is off in this feed’s Settings, so none goes out until it is turned on there.',
    );
    const [feed] = await subscriptions();
    expect(feed).toMatchObject({ digest_hour: 8, digest_minute: 30, digest_zone: 'Europe/Kyiv' });
  });

  it.each([
    [
      { feed_digest: 'weekly', feed_weekday: '3' },
      'with a weekly digest every Wednesday at 08:30 Europe/Kyiv.',
    ],
    [
      { feed_digest: 'off' },
      'with its digest off in this feed’s Settings (its time kept: 08:30 Europe/Kyiv).',
    ],
  ])(
    'says the digest as its Settings send it when the channel already has the feed: %j',
    async (edits, words) => {
      await movedAfter(edits);
      const again = await balance('subscribe');
      expect(again.outcome).toBe('already_subscribed');
      expect(again.text).toContain(words);
    },
  );
});

describe('a digest time without a zone', () => {
  it.each([
    ['subscribe', '09:00 Europe/Kyiv'],
    ['subscribe 07:15', '07:15 Europe/Kyiv'],
    ['subscribe 07:15 Asia/Tokyo', '07:15 Asia/Tokyo'],
  ])('is in the subscriber’s own Slack time zone: %j is at %s', async (text, digest) => {
    expect((await balance(text, IN_KYIV)).text).toBe(
      `Done: the payments feed is on in this channel, with a digest every day at ${digest}.`,
    );
  });

  it('moves an existing digest into the subscriber’s zone too', async () => {
    await balance('subscribe');
    expect((await balance('subscribe 10:00', IN_KYIV)).text).toContain(
      'every day at 10:00 Europe/Kyiv from now on',
    );
  });

  it('is the zone Slack’s directory gives the person (`users.info` `user.tz`)', async () => {
    const asked: string[] = [];
    const directory = createDirectory({
      users: {
        info: async ({ user }) => {
          asked.push(user);
          return { user: { team_id: HOME_TEAM, tz: 'America/Argentina/Buenos_Aires' } };
        },
      },
    });
    const deps = {
      ...env.deps(),
      access: createAccess({ home: { teamId: HOME_TEAM, enterpriseId: undefined } }, directory),
    };
    const { args, rec } = commandArgs({ command: '/balance', text: 'subscribe 07:15', channel_id: FINANCE });
    await commandListener(deps, '/balance', createBalanceCommand(deps))(args);
    expect(visibleText(rec.acks[0] ?? rec.responses[0])).toContain('07:15 America/Argentina/Buenos_Aires');
    expect(asked).toEqual(['U0ASKER']);
  });

  it('is in UTC when Slack does not say the person’s zone, or cannot be asked', async () => {
    expect((await balance('subscribe 07:15')).text).toContain('07:15 UTC');
    await balance('unsubscribe');
    const failing = await balance('subscribe 07:15', { directoryFails: 'after_first' });
    expect(failing.text).toContain('07:15 UTC');
    expect(failing.logs.lines.map((l) => l.msg)).toContain(
      'could not read the person’s time zone from Slack: the digest is in UTC',
    );
  });
});
