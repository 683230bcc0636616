import { webApi } from '@slack/bolt';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SlackMethod } from '../../src/slack/calls.js';
import { SlackPostError } from '../../src/slack/calls.js';
import {
  createSlackPoster,
  FIND_MAX_PAGES,
  FIND_PAGE_SIZE,
  MESSAGE_EVENT_TYPE,
  type SlackPoster,
} from '../../src/slack/poster.js';
import { type SlackStandIn, startSlackStandIn } from '../support/slack-stand-in.js';

const TOKEN = 'xoxb-poster-test';
const BLOCKS = [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'Paid' } }];

/** The client as the app builds it for its own posts: no retries, a 429 returned at once. */
const clientFor = (apiUrl: string) =>
  new webApi.WebClient(TOKEN, {
    slackApiUrl: apiUrl,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
  });

describe('the Slack poster', () => {
  let slack: SlackStandIn;
  let poster: SlackPoster;
  let reports: [SlackMethod, string][];

  beforeAll(async () => {
    slack = await startSlackStandIn({ teamId: 'T0HOME', botToken: TOKEN });
  });
  afterAll(() => slack.close());
  beforeEach(() => {
    reports = [];
    slack.calls.length = 0;
    poster = createSlackPoster(clientFor(slack.apiUrl), (method, result) => reports.push([method, result]));
  });

  /** A card, and a reply in its thread carrying `messageId`. */
  const reply = async (channel: string, messageId: string) => {
    const parent = await poster.post({ channel, text: 'card', blocks: BLOCKS });
    const ts = await poster.post({ channel, text: 'reply', blocks: BLOCKS, threadTs: parent, messageId });
    return { parent, ts };
  };
  const lastCall = (method: string) => slack.calls.filter((c) => c.method === method).at(-1)?.args;
  const failureOf = (work: Promise<unknown>) =>
    work.then(
      () => expect.fail('expected the call to fail'),
      (error: unknown) => {
        expect(error).toBeInstanceOf(SlackPostError);
        return error as SlackPostError;
      },
    );

  it('posts a message without link previews and returns its ts', async () => {
    const ts = await poster.post({ channel: 'C0FEED', text: 'Invoice paid', blocks: BLOCKS });
    const posted = slack.messages.find((m) => m.ts === ts);
    expect(posted).toMatchObject({
      channel: 'C0FEED',
      text: 'Invoice paid',
      blocks: BLOCKS,
      threadTs: undefined,
    });
    expect(posted?.metadata).toBeUndefined();
    expect(lastCall('chat.postMessage')).toMatchObject({ unfurl_links: 'false', unfurl_media: 'false' });
    expect(lastCall('chat.postMessage')).not.toHaveProperty('thread_ts');
    expect(reports).toEqual([['chat.postMessage', 'ok']]);
  });

  it('posts in a thread, marking the message with our id so it can be found after a crash', async () => {
    const { parent, ts } = await reply('C0FEED', 'msg-1');
    expect(slack.messages.find((m) => m.ts === ts)).toMatchObject({
      threadTs: parent,
      metadata: { event_type: MESSAGE_EVENT_TYPE, event_payload: { id: 'msg-1' } },
    });
    expect(MESSAGE_EVENT_TYPE).toBe('payments_bot_message');
  });

  it('updates a message in place, keeping its id in the metadata', async () => {
    const ts = await poster.post({ channel: 'C0FEED', text: 'Pending', blocks: BLOCKS });
    await poster.update({ channel: 'C0FEED', ts, text: 'Paid', blocks: BLOCKS, messageId: 'msg-2' });
    expect(slack.messages.find((m) => m.ts === ts)?.edits).toEqual([{ text: 'Paid', blocks: BLOCKS }]);
    expect(lastCall('chat.update')).toMatchObject({
      metadata: { event_type: MESSAGE_EVENT_TYPE, event_payload: { id: 'msg-2' } },
    });
    expect(reports.at(-1)).toEqual(['chat.update', 'ok']);
  });

  it('deletes a message', async () => {
    const ts = await poster.post({ channel: 'C0FEED', text: 'Pending', blocks: BLOCKS });
    await poster.remove({ channel: 'C0FEED', ts });
    expect(slack.messages.find((m) => m.ts === ts)?.deleted).toBe(true);
    expect(reports.at(-1)).toEqual(['chat.delete', 'ok']);
  });

  describe('finds a message it posted by our id', () => {
    /** Around now: the window an attempt made just now is looked for in. */
    const around = () => ({ oldest: Date.now() - 5000, latest: Date.now() + 60_000 });
    /** `count` messages of other people, posted after ours, straight into the stand-in's channel. */
    const chatter = (channel: string, count: number, threadTs?: string) => {
      const second = Math.floor(Date.now() / 1000);
      for (let i = 0; i < count; i += 1) {
        slack.messages.push({
          channel,
          ts: `${second}.${String(900_000 + i)}`,
          threadTs,
          text: `chatter ${i}`,
          blocks: [],
          edits: [],
          deleted: false,
        });
      }
    };

    it('among the channel’s messages between two moments, a second wider each way for rounding', async () => {
      const since = Date.now();
      await poster.post({ channel: 'C0FIND', text: 'other', blocks: BLOCKS, messageId: 'someone-else' });
      await poster.post({ channel: 'C0FIND', text: 'plain', blocks: BLOCKS });
      const ts = await poster.post({ channel: 'C0FIND', text: 'mine', blocks: BLOCKS, messageId: 'mine' });
      const until = since + 600_000;
      expect(await poster.find({ channel: 'C0FIND', oldest: since, latest: until, messageId: 'mine' })).toBe(
        ts,
      );
      expect(lastCall('conversations.history')).toMatchObject({
        channel: 'C0FIND',
        oldest: String(Math.floor(since / 1000) - 1),
        latest: String(Math.ceil(until / 1000) + 1),
        include_all_metadata: 'true',
        limit: '200',
      });
      expect(lastCall('conversations.history')).not.toHaveProperty('cursor');
      expect(reports.at(-1)).toEqual(['conversations.history', 'ok']);
    });

    it('not before `oldest` nor after `latest`', async () => {
      await poster.post({ channel: 'C0WINDOW', text: 'mine', blocks: BLOCKS, messageId: 'mine' });
      const now = Date.now();
      expect(
        await poster.find({
          channel: 'C0WINDOW',
          oldest: now + 5000,
          latest: now + 60_000,
          messageId: 'mine',
        }),
      ).toBeUndefined();
      expect(
        await poster.find({
          channel: 'C0WINDOW',
          oldest: now - 60_000,
          latest: now - 5000,
          messageId: 'mine',
        }),
      ).toBeUndefined();
    });

    it('in a busy channel, paging back past the newest 200 messages', async () => {
      const mine = await poster.post({
        channel: 'C0BUSY',
        text: 'mine',
        blocks: BLOCKS,
        messageId: 'busy-1',
      });
      chatter('C0BUSY', FIND_PAGE_SIZE + 50);
      slack.calls.length = 0;
      expect(await poster.find({ channel: 'C0BUSY', ...around(), messageId: 'busy-1' })).toBe(mine);
      const pages = slack.calls.filter((c) => c.method === 'conversations.history');
      expect(pages.map((c) => c.args.cursor)).toEqual([undefined, String(FIND_PAGE_SIZE)]);
    });

    it('in a long thread, paging on past its first 200 replies', async () => {
      const parent = await poster.post({ channel: 'C0LONG', text: 'card', blocks: BLOCKS });
      chatter('C0LONG', FIND_PAGE_SIZE + 10, parent);
      const mine = await poster.post({
        channel: 'C0LONG',
        text: 'mine',
        blocks: BLOCKS,
        threadTs: parent,
        messageId: 'long-1',
      });
      expect(
        await poster.find({ channel: 'C0LONG', threadTs: parent, ...around(), messageId: 'long-1' }),
      ).toBe(mine);
      expect(lastCall('conversations.replies')).toMatchObject({ cursor: String(FIND_PAGE_SIZE) });
    });

    it(`reads at most ${FIND_MAX_PAGES} pages, then says it cannot tell`, async () => {
      await poster.post({ channel: 'C0FLOOD', text: 'mine', blocks: BLOCKS, messageId: 'flood-1' });
      chatter('C0FLOOD', FIND_PAGE_SIZE * FIND_MAX_PAGES);
      slack.calls.length = 0;
      const error = await failureOf(poster.find({ channel: 'C0FLOOD', ...around(), messageId: 'flood-1' }));
      expect(error).toMatchObject({ failure: 'refused', slackError: 'search_too_long' });
      expect(slack.calls.filter((c) => c.method === 'conversations.history')).toHaveLength(FIND_MAX_PAGES);
    });

    it.each([
      ['a public channel the bot has not joined', 'C0PUBLIC', 'not_in_channel'],
      ['a direct message addressed by user id', 'U0SUBSCRIBER', 'channel_not_found'],
    ])('cannot look in %s: Slack answers %s', async (_where, channel, code) => {
      slack.conversations.set('C0PUBLIC', { id: 'C0PUBLIC', is_member: false });
      await poster.post({ channel, text: 'mine', blocks: BLOCKS, messageId: 'closed-1' });
      const error = await failureOf(poster.find({ channel, ...around(), messageId: 'closed-1' }));
      expect(error).toMatchObject({ failure: 'not_in_channel', slackError: code });
    });

    it('among a thread’s replies', async () => {
      const { parent, ts } = await reply('C0FIND', 'reply-1');
      expect(
        await poster.find({ channel: 'C0FIND', threadTs: parent, ...around(), messageId: 'reply-1' }),
      ).toBe(ts);
      expect(lastCall('conversations.replies')).toMatchObject({
        ts: parent,
        include_all_metadata: 'true',
        limit: '200',
      });
      expect(reports.at(-1)).toEqual(['conversations.replies', 'ok']);
    });

    it('and answers undefined when there is none', async () => {
      await poster.post({ channel: 'C0NONE', text: 'other', blocks: BLOCKS, messageId: 'other' });
      expect(await poster.find({ channel: 'C0NONE', ...around(), messageId: 'missing' })).toBeUndefined();
      slack.answerNext('conversations.history', { ok: true });
      expect(await poster.find({ channel: 'C0NONE', ...around(), messageId: 'other' })).toBeUndefined();
    });

    it('ignoring messages that carry someone else’s metadata with the same id', async () => {
      slack.answerNext('conversations.history', {
        ok: true,
        messages: [{ ts: '1.000001', metadata: { event_type: 'another_app', event_payload: { id: 'x' } } }],
      });
      expect(await poster.find({ channel: 'C0NONE', ...around(), messageId: 'x' })).toBeUndefined();
    });
  });

  it.each([
    [{}, { isPrivate: false, isDirect: false, isShared: false }],
    [{ is_private: true }, { isPrivate: true, isDirect: false, isShared: false }],
    [{ is_im: true }, { isPrivate: true, isDirect: true, isShared: false }],
    [{ is_mpim: true }, { isPrivate: true, isDirect: true, isShared: false }],
    [{ is_ext_shared: true }, { isPrivate: false, isDirect: false, isShared: true }],
    [{ is_shared: true }, { isPrivate: false, isDirect: false, isShared: true }],
    [{ is_pending_ext_shared: true }, { isPrivate: false, isDirect: false, isShared: true }],
  ])('tells what kind of conversation %o is', async (flags, facts) => {
    slack.conversations.set('C0KIND', { id: 'C0KIND', ...flags });
    expect(await poster.conversation('C0KIND')).toEqual(facts);
    expect(reports).toEqual([['conversations.info', 'ok']]);
  });
});

describe('the Slack poster at its edges', () => {
  let slack: SlackStandIn;
  beforeAll(async () => {
    slack = await startSlackStandIn({ teamId: 'T0HOME', botToken: TOKEN });
  });
  afterAll(() => slack.close());
  const bare = () => createSlackPoster(clientFor(slack.apiUrl));
  const message = { channel: 'C0EDGE', text: 'x', blocks: BLOCKS };

  it.each<[string, () => void, (p: SlackPoster) => Promise<unknown>]>([
    [
      'a gone message',
      () => slack.answerNext('chat.update', { ok: false, error: 'message_not_found' }),
      (p) => p.update({ ...message, ts: '1.1' }),
    ],
    [
      'a "ratelimited" error',
      () => slack.answerNext('chat.delete', { ok: false, error: 'ratelimited' }),
      (p) => p.remove({ channel: 'C0EDGE', ts: '1.1' }),
    ],
    ['an HTTP 429', () => slack.rateLimitNext('chat.postMessage', 1), (p) => p.post(message)],
    [
      'a refusal',
      () => slack.answerNext('chat.postMessage', { ok: false, error: 'invalid_blocks' }),
      (p) => p.post(message),
    ],
    [
      'a 5xx',
      () => slack.answerNext('chat.postMessage', { ok: false }, { status: 503 }),
      (p) => p.post(message),
    ],
  ])(
    'keeps Slack’s error as the cause of %s, and needs no one told of its calls',
    async (_label, arrange, act) => {
      arrange();
      const error = await act(bare()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SlackPostError);
      expect((error as SlackPostError).cause).toBeInstanceOf(Error);
    },
  );

  it('posts without anyone told of its calls', async () => {
    expect(await bare().post(message)).toMatch(/^\d+\.\d+$/);
  });

  it('reads a conversations.info answer without a channel as a public channel', async () => {
    slack.answerNext('conversations.info', { ok: true });
    expect(await bare().conversation('C0EDGE')).toEqual({
      isPrivate: false,
      isDirect: false,
      isShared: false,
    });
  });

  it('passes over a message of ours whose metadata has no payload', async () => {
    slack.answerNext('conversations.history', {
      ok: true,
      messages: [{ ts: '1.000001', metadata: { event_type: MESSAGE_EVENT_TYPE } }],
    });
    expect(await bare().find({ channel: 'C0EDGE', oldest: 0, latest: 1, messageId: 'x' })).toBeUndefined();
  });
});
