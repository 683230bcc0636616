import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DemoSlack, startDemoSlack } from '../../src/demo/slack.js';
import { type Answer, api, formCall, post } from '../support/demo-slack-api.js';

/**
 * The Web API methods of the demo's Slack, called over HTTP as the bot calls them: the answers
 * and errors as Slack shapes them, and what the channel and App Home show afterwards.
 */

let slack: DemoSlack;

beforeEach(async () => {
  slack = await startDemoSlack({ unfurlHosts: [] });
});

afterEach(async () => {
  await slack.close();
});

const call = (method: string, args: Answer) => api(slack, method, args);
const channel = () => slack.messages.map((m) => ({ text: m.text, threadTs: m.threadTs }));

describe('who the bot is and who it talks to', () => {
  it('auth.test names the demo workspace and the bot', async () => {
    expect(await call('auth.test', {})).toEqual({
      ok: true,
      url: 'http://demo.invalid/',
      team: 'Demo',
      user: 'crypto_payments',
      team_id: 'T0DEMO',
      user_id: 'U0BOT',
      bot_id: 'B0BOT',
    });
  });

  it('users.info knows you and the bot, and no one else', async () => {
    expect(await call('users.info', { user: 'U0YOU' })).toEqual({
      ok: true,
      user: { id: 'U0YOU', team_id: 'T0DEMO', name: 'you', is_bot: false },
    });
    expect(await call('users.info', { user: 'U0BOT' })).toEqual({
      ok: true,
      user: { id: 'U0BOT', team_id: 'T0DEMO', name: 'Crypto Payments', is_bot: true },
    });
    expect(await call('users.info', { user: 'U0NOBODY' })).toEqual({ ok: false, error: 'user_not_found' });
    expect(await call('users.info', {})).toEqual({ ok: false, error: 'user_not_found' });
  });

  it('conversations.info describes the one private channel the bot is in', async () => {
    expect(await call('conversations.info', { channel: 'C0PAYMENTS' })).toEqual({
      ok: true,
      channel: {
        id: 'C0PAYMENTS',
        name: 'payments',
        is_channel: true,
        is_private: true,
        is_im: false,
        is_mpim: false,
        is_shared: false,
        is_ext_shared: false,
        is_pending_ext_shared: false,
        is_member: true,
      },
    });
  });
});

describe('views.publish', () => {
  const home = { type: 'home', blocks: [{ type: 'divider' }] };

  it('publishes your App Home and answers with the view', async () => {
    expect(await call('views.publish', { user_id: 'U0YOU', view: home })).toEqual({
      ok: true,
      view: { id: 'V0HOME', ...home },
    });
    expect(slack.home).toEqual([{ type: 'divider' }]);
    expect(await call('views.publish', { user_id: 'U0YOU', view: { type: 'home' } })).toMatchObject({
      ok: true,
    });
    expect(slack.home).toEqual([]);
  });

  it('refuses another user, or a view that is not a home tab, leaving the Home unpublished', async () => {
    expect(await call('views.publish', { user_id: 'U0BOT', view: home })).toEqual({
      ok: false,
      error: 'user_not_found',
    });
    for (const view of [undefined, 'home', [home], { ...home, type: 'modal' }])
      expect(await call('views.publish', { user_id: 'U0YOU', view })).toEqual({
        ok: false,
        error: 'invalid_arguments',
      });
    expect(slack.home).toBeUndefined();
  });
});

describe('chat.postMessage', () => {
  it('posts in the channel as the bot: text, blocks, and nothing when not given', async () => {
    const answer = await call('chat.postMessage', { channel: 'C0PAYMENTS' });
    expect(answer).toEqual({ ok: true, channel: 'C0PAYMENTS', ts: slack.messages[0]?.ts });
    expect(slack.messages[0]).toMatchObject({ user: 'U0BOT', text: '', blocks: [], ephemeral: false });
  });

  it('refuses another channel, or a thread that does not exist, posting nothing', async () => {
    expect(await call('chat.postMessage', { channel: 'C0OTHER', text: 'x' })).toEqual({
      ok: false,
      error: 'channel_not_found',
    });
    expect(
      await call('chat.postMessage', { channel: 'C0PAYMENTS', text: 'x', thread_ts: '1.000001' }),
    ).toEqual({
      ok: false,
      error: 'thread_not_found',
    });
    expect(slack.messages).toEqual([]);
  });
});

describe('chat.update', () => {
  it('replaces text and blocks; keeps the metadata unless new metadata is given', async () => {
    const metadata = { event_type: 'payments_bot_message', event_payload: { id: 'a' } };
    const ts = await post(slack, { text: 'v1', blocks: [{ type: 'divider' }], metadata });
    expect(await call('chat.update', { channel: 'C0PAYMENTS', ts })).toEqual({
      ok: true,
      channel: 'C0PAYMENTS',
      ts,
    });
    expect(slack.messages[0]).toMatchObject({ text: '', blocks: [], edited: true, metadata });
    const next = { event_type: 'payments_bot_message', event_payload: { id: 'b' } };
    await call('chat.update', { channel: 'C0PAYMENTS', ts, text: 'v2', metadata: next });
    expect(slack.messages[0]).toMatchObject({ text: 'v2', metadata: next });
  });

  it('finds no message in another channel, and may not edit yours', async () => {
    const ts = await post(slack, { text: 'mine' });
    expect(await call('chat.update', { channel: 'C0OTHER', ts, text: 'x' })).toEqual({
      ok: false,
      error: 'message_not_found',
    });
    await slack.say('a message you typed');
    const yours = slack.messages[1]?.ts;
    expect(await call('chat.update', { channel: 'C0PAYMENTS', ts: yours, text: 'x' })).toEqual({
      ok: false,
      error: 'cant_update_message',
    });
    await slack.say('/weather');
    const notice = slack.messages.at(-1);
    expect(notice?.ephemeral).toBe(true);
    expect(await call('chat.update', { channel: 'C0PAYMENTS', ts: notice?.ts, text: 'x' })).toEqual({
      ok: false,
      error: 'cant_update_message',
    });
    expect(slack.messages.map((m) => m.text)).not.toContain('x');
  });
});

describe('chat.delete', () => {
  it('deletes a message with its thread, leaving the rest', async () => {
    const parent = await post(slack, { text: 'parent' });
    await post(slack, { text: 'reply', thread_ts: parent });
    const other = await post(slack, { text: 'other' });
    await post(slack, { text: 'other reply', thread_ts: other });
    expect(await call('chat.delete', { channel: 'C0PAYMENTS', ts: parent })).toEqual({
      ok: true,
      channel: 'C0PAYMENTS',
      ts: parent,
    });
    expect(channel()).toEqual([
      { text: 'other', threadTs: undefined },
      { text: 'other reply', threadTs: other },
    ]);
  });

  it('deletes a reply alone', async () => {
    const parent = await post(slack, { text: 'parent' });
    const reply = await post(slack, { text: 'reply', thread_ts: parent });
    await post(slack, { text: 'second reply', thread_ts: parent });
    await call('chat.delete', { channel: 'C0PAYMENTS', ts: reply });
    expect(channel()).toEqual([
      { text: 'parent', threadTs: undefined },
      { text: 'second reply', threadTs: parent },
    ]);
  });

  it('finds nothing to delete in another channel or at an unknown ts', async () => {
    const ts = await post(slack, { text: 'stays' });
    for (const args of [{ channel: 'C0OTHER', ts }, { channel: 'C0PAYMENTS', ts: '1.000001' }, {}])
      expect(await call('chat.delete', args)).toEqual({ ok: false, error: 'message_not_found' });
    expect(channel()).toEqual([{ text: 'stays', threadTs: undefined }]);
  });
});

describe('chat.unfurl', () => {
  it('attaches a card per link, by ts; a card without blocks shows none', async () => {
    await slack.say('see http://a.example/1');
    const ts = slack.messages[0]?.ts;
    const blocks = [{ type: 'divider' }];
    const unfurls = { 'http://a.example/1': { blocks }, 'http://a.example/2': {}, 'http://a.example/3': 'x' };
    expect(await call('chat.unfurl', { channel: 'C0PAYMENTS', ts, unfurls })).toEqual({ ok: true });
    expect(slack.messages[0]?.unfurls).toEqual([
      { url: 'http://a.example/1', blocks },
      { url: 'http://a.example/2', blocks: [] },
      { url: 'http://a.example/3', blocks: [] },
    ]);
  });

  it('refuses when there is no message to unfurl', async () => {
    for (const args of [{}, { ts: '1.000001' }, { unfurl_id: 'C0PAYMENTS.1.000001' }])
      expect(await call('chat.unfurl', { ...args, unfurls: {} })).toEqual({
        ok: false,
        error: 'cannot_unfurl_message',
      });
  });
});

describe('conversations.history and conversations.replies', () => {
  it('lists the channel’s top-level messages in a window, the edges included, as Slack shapes them', async () => {
    const first = await post(slack, { text: 'first' });
    const second = await post(slack, { text: 'second' });
    await post(slack, { text: 'reply', thread_ts: first });
    const third = await post(slack, { text: 'third' });
    const texts = async (args: Answer) => {
      const answer = await call('conversations.history', { channel: 'C0PAYMENTS', ...args });
      expect(answer).toMatchObject({ ok: true, has_more: false });
      return (answer.messages as { text: string }[]).map((m) => m.text);
    };
    expect(await texts({})).toEqual(['first', 'second', 'third']);
    expect(await texts({ oldest: second, latest: third })).toEqual(['second', 'third']);
    expect(await texts({ oldest: third })).toEqual(['third']);
    expect(await texts({ latest: second })).toEqual(['first', 'second']);
    expect(await call('conversations.history', { channel: 'C0PAYMENTS', latest: first })).toEqual({
      ok: true,
      messages: [
        {
          type: 'message',
          bot_id: 'B0BOT',
          user: 'U0BOT',
          text: 'first',
          blocks: [],
          ts: first,
          metadata: undefined,
        },
      ].map((m) => JSON.parse(JSON.stringify(m))),
      has_more: false,
    });
  });

  it('lists a thread: its parent and its replies only', async () => {
    const parent = await post(slack, { text: 'parent' });
    await post(slack, { text: 'elsewhere' });
    const other = await post(slack, { text: 'other parent' });
    await post(slack, { text: 'reply', thread_ts: parent });
    await post(slack, { text: 'other reply', thread_ts: other });
    const replies = await call('conversations.replies', { channel: 'C0PAYMENTS', ts: parent });
    expect(replies).toMatchObject({ ok: true, has_more: false });
    expect(replies.messages).toEqual([
      expect.objectContaining({ text: 'parent', ts: parent }),
      expect.objectContaining({ text: 'reply', thread_ts: parent }),
    ]);
  });

  it('knows no other channel', async () => {
    await post(slack, { text: 'x' });
    for (const method of ['conversations.history', 'conversations.replies'])
      expect(await call(method, { channel: 'C0OTHER', ts: slack.messages[0]?.ts })).toEqual({
        ok: false,
        error: 'channel_not_found',
      });
  });
});

describe('form-encoded calls, as the Web API client makes them', () => {
  it('reads view, unfurls and metadata as JSON', async () => {
    const view = { type: 'home', blocks: [{ type: 'divider' }] };
    await formCall(slack, 'views.publish', { user_id: 'U0YOU', view: JSON.stringify(view) });
    expect(slack.home).toEqual(view.blocks);
    const metadata = { event_type: 'payments_bot_message', event_payload: { id: 'f' } };
    const posted = (await (
      await formCall(slack, 'chat.postMessage', {
        channel: 'C0PAYMENTS',
        text: 't',
        metadata: JSON.stringify(metadata),
      })
    ).json()) as { ts: string };
    expect(slack.messages[0]?.metadata).toEqual(metadata);
    const unfurls = { 'http://a.example/': { blocks: view.blocks } };
    await formCall(slack, 'chat.unfurl', { ts: posted.ts, unfurls: JSON.stringify(unfurls) });
    expect(slack.messages[0]?.unfurls).toEqual([{ url: 'http://a.example/', blocks: view.blocks }]);
  });

  it('refuses a JSON field that is not JSON as an invalid payload', async () => {
    for (const field of ['blocks', 'attachments', 'unfurls', 'view', 'metadata']) {
      const response = await formCall(slack, 'chat.postMessage', {
        channel: 'C0PAYMENTS',
        [field]: '{not json',
      });
      expect({ field, status: response.status, body: await response.text() }).toEqual({
        field,
        status: 400,
        body: 'invalid_payload',
      });
    }
    expect(slack.messages).toEqual([]);
  });
});
