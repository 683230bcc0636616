import { readFileSync } from 'node:fs';
import { webApi } from '@slack/bolt';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type PostFailure, type SlackMethod, SlackPostError } from '../../src/slack/calls.js';
import { CODE_TABLES } from '../../src/slack/error-codes.js';
import { createSlackPoster, type SlackPoster } from '../../src/slack/poster.js';
import { type SlackStandIn, startSlackStandIn } from '../support/slack-stand-in.js';

const TOKEN = 'xoxb-error-codes-test';
const BLOCKS = [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'Paid' } }];
const message = { channel: 'C0FEED', text: 'x', blocks: BLOCKS };

/** How each of the poster's calls is made, by the Web API method it calls. */
const CALLS = {
  'chat.postMessage': (p: SlackPoster) => p.post(message),
  'chat.update': (p: SlackPoster) => p.update({ ...message, ts: '1.1' }),
  'chat.delete': (p: SlackPoster) => p.remove({ channel: 'C0FEED', ts: '1.1' }),
  'conversations.history': (p: SlackPoster) =>
    p.find({ channel: 'C0FEED', oldest: 0, latest: 1, messageId: 'x' }),
  'conversations.replies': (p: SlackPoster) =>
    p.find({ channel: 'C0FEED', threadTs: '1.1', oldest: 0, latest: 1, messageId: 'x' }),
  'conversations.info': (p: SlackPoster) => p.conversation('C0FEED'),
} as const;
type Method = keyof typeof CALLS;
const EVERY_METHOD = Object.keys(CALLS) as Method[];

/**
 * The codes Slack's pages (docs.slack.dev, Errors of each method) describe as passing, written
 * here independently of the bot's table: the service's own trouble, a workspace migrating, a
 * rotating token that expired, and each method's own.
 */
const TEMPORARY_EVERYWHERE = [
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'team_added_to_org',
  'org_login_required',
  'token_expired',
];
const TEMPORARY: [Method, string, PostFailure][] = [
  ...EVERY_METHOD.flatMap((method) =>
    TEMPORARY_EVERYWHERE.map((code) => [method, code, 'transient'] as [Method, string, PostFailure]),
  ),
  ['chat.postMessage', 'rate_limited', 'rate_limited'],
  ['chat.postMessage', 'message_limit_exceeded', 'transient'],
  ['chat.update', 'update_failed', 'transient'],
  ['chat.update', 'external_channel_migrating', 'transient'],
  ['chat.update', 'message_limit_exceeded', 'transient'],
  ['chat.update', 'streaming_state_conflict', 'transient'],
];

describe('what Slack’s answers mean to the bot', () => {
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
    const client = new webApi.WebClient(TOKEN, {
      slackApiUrl: slack.apiUrl,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
    });
    poster = createSlackPoster(client, (method, result) => reports.push([method, result]));
  });
  const failureOf = (work: Promise<unknown>) =>
    work.then(
      () => expect.fail('expected the call to fail'),
      (error: unknown) => {
        expect(error).toBeInstanceOf(SlackPostError);
        return error as SlackPostError;
      },
    );
  const answered = (method: Method, code: string) => {
    slack.answerNext(method, { ok: false, error: code });
    return failureOf(CALLS[method](poster));
  };

  it.each(TEMPORARY)('%s answered %s: worth another try (%s), naming it', async (method, code, failure) => {
    const error = await answered(method, code);
    expect(error).toMatchObject({ failure, slackError: code, retryAfterMs: undefined });
    expect(error.message).toBe(`Slack did not take the message: ${code}`);
    expect(reports).toEqual([[method, failure]]);
  });

  it.each(EVERY_METHOD)('%s answered "ratelimited" without a 429: wait a second', async (method) => {
    const error = await answered(method, 'ratelimited');
    expect(error).toMatchObject({ failure: 'rate_limited', slackError: 'ratelimited', retryAfterMs: 1000 });
  });

  it.each<[Method, string, PostFailure]>([
    ['chat.postMessage', 'not_in_channel', 'not_in_channel'],
    ['chat.postMessage', 'channel_not_found', 'not_in_channel'],
    ['chat.postMessage', 'is_archived', 'not_in_channel'],
    ['chat.postMessage', 'restricted_action', 'not_in_channel'],
    ['chat.postMessage', 'invalid_blocks', 'refused'],
    ['chat.postMessage', 'msg_blocks_too_long', 'refused'],
    ['chat.postMessage', 'restricted_action_read_only_channel', 'refused'],
    ['chat.postMessage', 'invalid_auth', 'refused'],
    ['chat.postMessage', 'token_revoked', 'refused'],
    ['chat.postMessage', 'account_inactive', 'refused'],
    ['chat.update', 'message_not_found', 'message_not_found'],
    ['chat.update', 'cant_update_message', 'message_not_found'],
    ['chat.update', 'is_inactive', 'not_in_channel'],
    ['chat.update', 'edit_window_closed', 'refused'],
    ['chat.update', 'msg_too_long', 'refused'],
    ['chat.delete', 'message_not_found', 'message_not_found'],
    ['chat.delete', 'cant_delete_message', 'refused'],
    ['conversations.history', 'not_in_channel', 'not_in_channel'],
    ['conversations.history', 'channel_is_limited_access', 'not_in_channel'],
    ['conversations.history', 'missing_scope', 'refused'],
    ['conversations.replies', 'thread_not_found', 'message_not_found'],
    ['conversations.replies', 'invalid_cursor', 'refused'],
    ['conversations.info', 'channel_not_found', 'not_in_channel'],
  ])('%s answered %s: refused for good (%s)', async (method, code, failure) => {
    const error = await answered(method, code);
    expect(error).toMatchObject({
      name: 'SlackPostError',
      failure,
      slackError: code,
      retryAfterMs: undefined,
    });
    expect(error.cause).toBeInstanceOf(Error);
    expect(reports).toEqual([[method, failure]]);
  });

  it.each<[Method, string]>([
    ['chat.postMessage', 'a_code_no_page_lists'],
    // Each method by its own page: these refuse for good only where they are listed.
    ['conversations.info', 'thread_not_found'],
    ['chat.delete', 'is_inactive'],
    ['conversations.history', 'edit_window_closed'],
  ])('%s answered %s, which its page does not list: worth another try', async (method, code) => {
    expect(await answered(method, code)).toMatchObject({ failure: 'transient', slackError: code });
  });

  it('an HTTP 429: wait as long as Retry-After says, asking once', async () => {
    slack.rateLimitNext('chat.postMessage', 7);
    const error = await failureOf(poster.post(message));
    expect(error).toMatchObject({ failure: 'rate_limited', slackError: 'ratelimited', retryAfterMs: 7000 });
    expect(slack.calls.filter((c) => c.method === 'chat.postMessage')).toHaveLength(1);
    expect(reports).toEqual([['chat.postMessage', 'rate_limited']]);
  });

  it('an HTTP 5xx: worth another try', async () => {
    slack.answerNext('chat.update', { ok: false }, { status: 503 });
    const error = await failureOf(poster.update({ ...message, ts: '1.1' }));
    expect(error).toMatchObject({ failure: 'transient', slackError: undefined, retryAfterMs: undefined });
  });

  it('a post Slack accepts without a ts: refused', async () => {
    slack.answerNext('chat.postMessage', { ok: true });
    expect(await failureOf(poster.post(message))).toMatchObject({ failure: 'refused', slackError: 'no_ts' });
  });

  it('no answer at all: transient, worth another try', async () => {
    const gone = await startSlackStandIn({ teamId: 'T0HOME', botToken: TOKEN });
    await gone.close();
    const client = new webApi.WebClient(TOKEN, { slackApiUrl: gone.apiUrl, retryConfig: { retries: 0 } });
    const offline = createSlackPoster(client, (method, result) => reports.push([method, result]));
    const error = await failureOf(offline.conversation('C0FEED'));
    expect(error).toMatchObject({ failure: 'transient', slackError: undefined, retryAfterMs: undefined });
    expect(error.message).toBe('Slack did not take the message: transient');
    expect(reports).toEqual([['conversations.info', 'transient']]);
  });
});

describe('docs/slack.md#slack-errors', () => {
  const COLUMNS: PostFailure[] = [
    'rate_limited',
    'transient',
    'not_in_channel',
    'message_not_found',
    'refused',
  ];
  const doc = readFileSync(new URL('../../docs/slack.md', import.meta.url), 'utf8');
  const start = doc.indexOf('<a id="slack-errors"></a>');
  const section = doc.slice(start, doc.indexOf('<a id=', start + 1));
  /** The table's rows: the method (or "every method") and each code with its column's meaning. */
  const rows = new Map(
    [...section.matchAll(/^\| (every method|`[a-zA-Z.]+`) \|(.*)\|$/gm)].map(
      ([, method = '', cells = '']) => [
        method.replaceAll('`', ''),
        new Map(
          cells
            .split('|')
            .flatMap((cell, column) =>
              [...cell.matchAll(/`([a-z_]+)`/g)].map(([, code = '']) => [code, COLUMNS[column]]),
            ),
        ),
      ],
    ),
  );

  it('lists every code the bot reads, for every method and for each, with what the bot does', () => {
    expect(rows.get('every method')).toEqual(CODE_TABLES.every);
    for (const [method, codes] of CODE_TABLES.byMethod) expect(rows.get(method), method).toEqual(codes);
    expect(rows.size).toBe(CODE_TABLES.byMethod.size + 1);
  });
});
