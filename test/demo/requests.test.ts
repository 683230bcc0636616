import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { BotEndpoint } from '../../src/demo/bot-endpoint.js';
import { click, openHome, type RequestContext, say, shortcut } from '../../src/demo/requests.js';
import { ResponseUrls } from '../../src/demo/response-urls.js';
import { Workspace } from '../../src/demo/workspace.js';

/**
 * The requests the demo's Slack builds for the bot, taken where they leave (the bot endpoint's
 * `send`): every field the bot reads, how they are encoded, and what the demo shows meanwhile.
 */

interface Sent {
  raw: string;
  contentType: string;
  what: string;
  threadTs: string | undefined;
}

const BASE = 'http://127.0.0.1:9/response/';
const FORM = 'application/x-www-form-urlencoded';

function demo(unfurlHosts: string[] = ['pay.example']) {
  const workspace = new Workspace();
  const sent: Sent[] = [];
  const state = { ack: '' as string | undefined };
  const bot = {
    send: async (raw: string, contentType: string, what: string, threadTs?: string) => {
      sent.push({ raw, contentType, what, threadTs });
      return state.ack;
    },
  } as unknown as BotEndpoint;
  const responseUrls = new ResponseUrls(workspace, BASE);
  const context: RequestContext = { workspace, bot, responseUrls, unfurlHosts };
  /** Posts `body` to a response_url, as the bot does. */
  const reply = (url: unknown, body: Record<string, unknown>) => {
    const res = { writeHead: () => res, end: () => res } as unknown as ServerResponse;
    expect(String(url).startsWith(BASE)).toBe(true);
    return responseUrls.answer(String(url).slice(BASE.length), JSON.stringify(body), res);
  };
  return { workspace, sent, state, context, reply };
}

/** The request's fields: a form's, a form's `payload`, or a JSON body. */
const fields = (s: Sent | undefined): Record<string, unknown> => {
  if (!s) throw new Error('nothing was sent');
  if (s.contentType === 'application/json') return JSON.parse(s.raw);
  const form = new URLSearchParams(s.raw);
  return form.has('payload') ? JSON.parse(form.get('payload') ?? '') : Object.fromEntries(form);
};

const nowSeconds = () => Date.now() / 1000;
const expectAboutNow = (seconds: unknown) => {
  expect(String(seconds)).toMatch(/^\d+(\.\d+)?$/);
  expect(Math.abs(Number(seconds) - nowSeconds())).toBeLessThan(60);
};
const TRIGGER_ID = /^\d{13}\.[0-9a-f]{8}$/;

describe('a slash command', () => {
  it('is sent form-encoded with every field Slack sends, and shown to you as typed', async () => {
    const { workspace, sent, context } = demo();
    await say(context, '  /BALANCE  usdt & <b>  ');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ contentType: FORM, what: '/balance', threadTs: undefined });
    const body = fields(sent[0]);
    expect(body).toEqual({
      token: 'demo-verification-token',
      team_id: 'T0DEMO',
      team_domain: 'demo',
      channel_id: 'C0PAYMENTS',
      channel_name: 'payments',
      user_id: 'U0YOU',
      user_name: 'you',
      command: '/balance',
      text: 'usdt & <b>',
      api_app_id: 'A0DEMO',
      is_enterprise_install: 'false',
      response_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:9\/response\/[0-9a-f-]{36}$/),
      trigger_id: expect.stringMatching(TRIGGER_ID),
    });
    expect(sent[0]?.raw).toContain('text=usdt+%26+%3Cb%3E');
    expect(workspace.messages).toHaveLength(1);
    expect(workspace.messages[0]).toMatchObject({
      user: 'U0YOU',
      text: '/BALANCE  usdt &amp; &lt;b&gt;',
      ephemeral: true,
      command: true,
    });
  });

  it('sends nothing and shows nothing for blank input', async () => {
    const { workspace, sent, context } = demo();
    await say(context, ' \n  ');
    expect(sent).toEqual([]);
    expect(workspace.messages).toEqual([]);
  });

  it('shows a reply carried in the acknowledgement: text only, or blocks only', async () => {
    const { workspace, state, context } = demo();
    state.ack = JSON.stringify({ text: 'only text' });
    await say(context, '/balance');
    state.ack = JSON.stringify({ blocks: [{ type: 'divider' }] });
    await say(context, '/invoice list');
    const replies = workspace.messages.filter((m) => m.user === 'U0BOT');
    expect(replies.map((m) => ({ text: m.text, blocks: m.blocks, ephemeral: m.ephemeral }))).toEqual([
      { text: 'only text', blocks: [], ephemeral: true },
      { text: '', blocks: [{ type: 'divider' }], ephemeral: true },
    ]);
  });

  it('shows nothing for an acknowledgement without a message: {}, null, an empty body', async () => {
    const { workspace, state, context } = demo();
    for (const ack of ['{}', '{"response_type":"in_channel"}', 'null', '[]', '']) {
      state.ack = ack;
      await say(context, '/balance');
    }
    expect(workspace.messages.filter((m) => m.user !== 'U0YOU')).toEqual([]);
    expect(workspace.messages).toHaveLength(5);
  });

  it('tells you when the acknowledgement is not JSON', async () => {
    const { workspace, state, context } = demo();
    state.ack = 'ok!';
    await say(context, '/invoice');
    expect(workspace.messages.at(-1)).toMatchObject({
      user: 'USLACKBOT',
      ephemeral: true,
      text: '/invoice failed with the error "invalid_ack"',
    });
  });
});

describe('a message', () => {
  it('is stored as Slack stores it, and its links on the unfurl domains go in a link_shared event', async () => {
    const { workspace, sent, context } = demo(['pay.example', 'pay.example:8080']);
    await say(
      context,
      '  a & b: http://pay.example:8080/pay/abc). https://pay.example/p?a=1&b=2 https://else.example/x  ',
    );
    const [message] = workspace.messages;
    expect(message?.text).toBe(
      'a &amp; b: <http://pay.example:8080/pay/abc>). <https://pay.example/p?a=1&amp;b=2> <https://else.example/x>',
    );
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ contentType: 'application/json', what: 'Unfurling the link' });
    const body = fields(sent[0]);
    expect(body).toEqual({
      token: 'demo-verification-token',
      team_id: 'T0DEMO',
      api_app_id: 'A0DEMO',
      type: 'event_callback',
      event_id: expect.stringMatching(/^Ev[0-9A-F]{12}$/),
      event_time: expect.any(Number),
      authorizations: [{ team_id: 'T0DEMO', user_id: 'U0BOT', is_bot: true, is_enterprise_install: false }],
      event: {
        type: 'link_shared',
        channel: 'C0PAYMENTS',
        is_bot_user_member: true,
        user: 'U0YOU',
        message_ts: message?.ts,
        unfurl_id: `C0PAYMENTS.${message?.ts}`,
        source: 'conversations_history',
        event_ts: message?.ts,
        links: [
          { domain: 'pay.example', url: 'http://pay.example:8080/pay/abc' },
          { domain: 'pay.example', url: 'https://pay.example/p?a=1&b=2' },
        ],
      },
    });
    expect(Number.isInteger(body.event_time)).toBe(true);
    expectAboutNow(body.event_time);
  });

  it('sends nothing for a message without a link on the unfurl domains', async () => {
    const { workspace, sent, context } = demo();
    await say(context, 'hello https://else.example/pay/1');
    expect(workspace.messages).toHaveLength(1);
    expect(sent).toEqual([]);
  });
});

const button = (action_id: string, value: string) => ({
  type: 'button',
  action_id,
  text: { type: 'plain_text', text: value },
  value,
});

describe('a click', () => {
  it('finds the button by block and action among lookalikes', async () => {
    const { workspace, sent, context } = demo();
    const posted = workspace.add({
      user: 'U0BOT',
      text: 'card',
      blocks: [
        null,
        { type: 'actions', block_id: 'other', elements: [button('go', 'wrong block')] },
        {
          type: 'actions',
          block_id: 'b',
          elements: [
            null,
            { type: 'static_select', action_id: 'go' },
            button('stop', 'wrong action'),
            button('go', 'right'),
          ],
        },
      ],
    });
    await click(context, { kind: 'message', ts: posted.ts }, 'b', 'go');
    expect(sent).toHaveLength(1);
    expect(fields(sent[0]).actions).toEqual([
      { ...button('go', 'right'), block_id: 'b', action_ts: expect.any(String) },
    ]);
  });

  it('in a message in a thread: user, team, channel, container, message and a response_url for it', async () => {
    const { workspace, sent, context, reply } = demo();
    const parent = workspace.add({ user: 'U0BOT', text: 'parent' });
    const blocks = [{ type: 'section', block_id: 's', accessory: button('refresh', 'id-1') }];
    const posted = workspace.add({ user: 'U0BOT', text: 'card', blocks, threadTs: parent.ts });
    await click(context, { kind: 'message', ts: posted.ts }, 's', 'refresh');
    expect(sent[0]).toMatchObject({ contentType: FORM, what: 'The button', threadTs: parent.ts });
    expect(sent[0]?.raw).toMatch(/^payload=%7B/);
    const body = fields(sent[0]);
    expect(body).toEqual({
      type: 'block_actions',
      user: { id: 'U0YOU', username: 'you', name: 'you', team_id: 'T0DEMO' },
      api_app_id: 'A0DEMO',
      token: 'demo-verification-token',
      team: { id: 'T0DEMO', domain: 'demo' },
      container: { type: 'message', message_ts: posted.ts, channel_id: 'C0PAYMENTS', is_ephemeral: false },
      trigger_id: expect.stringMatching(TRIGGER_ID),
      channel: { id: 'C0PAYMENTS', name: 'payments' },
      message: {
        type: 'message',
        bot_id: 'B0BOT',
        user: 'U0BOT',
        text: 'card',
        blocks,
        ts: posted.ts,
        thread_ts: parent.ts,
      },
      response_url: expect.any(String),
      actions: [{ ...button('refresh', 'id-1'), block_id: 's', action_ts: expect.any(String) }],
    });
    expectAboutNow((body.actions as { action_ts: string }[])[0]?.action_ts);
    reply(body.response_url, { replace_original: true, text: 'replaced' });
    expect(workspace.messages.map((m) => m.text)).toEqual(['parent', 'replaced']);
  });

  it('on an unfurled card: its container says so, and its response_url does not replace the message', async () => {
    const { workspace, sent, context, reply } = demo();
    const card = [{ type: 'actions', block_id: 'u', elements: [button('watch', 'id-2')] }];
    const posted = workspace.add({ user: 'U0YOU', text: 'see <https://pay.example/pay/2>' });
    posted.unfurls = [
      { url: 'https://pay.example/pay/1', blocks: [] },
      { url: 'https://pay.example/pay/2', blocks: card },
    ];
    await click(context, { kind: 'message', ts: posted.ts }, 'u', 'watch');
    expect(sent).toEqual([]);
    await click(context, { kind: 'unfurl', ts: posted.ts }, 'u', 'watch');
    expect(sent).toHaveLength(1);
    const body = fields(sent[0]);
    expect(body.container).toEqual({
      type: 'message_attachment',
      message_ts: posted.ts,
      channel_id: 'C0PAYMENTS',
      is_ephemeral: false,
      is_app_unfurl: true,
    });
    expect(body.message).toMatchObject({ user: 'U0YOU', ts: posted.ts });
    reply(body.response_url, { replace_original: true, text: 'new' });
    expect(workspace.messages.map((m) => m.text)).toEqual(['see <https://pay.example/pay/2>', 'new']);
  });

  it('on an ephemeral message: no message in the payload', async () => {
    const { workspace, sent, context } = demo();
    const blocks = [{ type: 'actions', block_id: 'e', elements: [button('go', 'v')] }];
    const posted = workspace.add({ user: 'U0BOT', text: 'only you', blocks, ephemeral: true });
    await click(context, { kind: 'message', ts: posted.ts }, 'e', 'go');
    const body = fields(sent[0]);
    expect(body).not.toHaveProperty('message');
    expect(body.container).toMatchObject({ type: 'message', is_ephemeral: true });
  });

  it('sends nothing for a message or card that is gone, or a home not yet published', async () => {
    const { sent, context } = demo();
    await click(context, { kind: 'message', ts: '1.000001' }, 'b', 'go');
    await click(context, { kind: 'unfurl', ts: '1.000001' }, 'b', 'go');
    await click(context, { kind: 'home' }, '', 'go');
    expect(sent).toEqual([]);
  });

  it('in the App Home: the view with its blocks, the second of two sections without block_id', async () => {
    const { workspace, sent, context } = demo();
    workspace.home = [
      { type: 'section', text: { type: 'mrkdwn', text: 'a' }, accessory: button('stop:0', 'w-0') },
      { type: 'section', text: { type: 'mrkdwn', text: 'b' }, accessory: button('stop:1', 'w-1') },
    ];
    await click(context, { kind: 'home' }, '', 'stop:1');
    expect(sent[0]).toMatchObject({ contentType: FORM, what: 'The button', threadTs: undefined });
    expect(fields(sent[0])).toEqual({
      type: 'block_actions',
      user: { id: 'U0YOU', username: 'you', name: 'you', team_id: 'T0DEMO' },
      api_app_id: 'A0DEMO',
      token: 'demo-verification-token',
      team: { id: 'T0DEMO', domain: 'demo' },
      container: { type: 'view', view_id: 'V0HOME' },
      trigger_id: expect.stringMatching(TRIGGER_ID),
      view: { id: 'V0HOME', type: 'home', blocks: workspace.home },
      actions: [{ ...button('stop:1', 'w-1'), block_id: '', action_ts: expect.any(String) }],
    });
  });
});

describe('the message shortcut', () => {
  it('carries the message and a response_url that answers in its thread', async () => {
    const { workspace, sent, context, reply } = demo();
    const parent = workspace.add({ user: 'U0YOU', text: 'parent' });
    const posted = workspace.add({ user: 'U0YOU', text: 'reply', threadTs: parent.ts });
    await shortcut(context, posted.ts);
    expect(sent[0]).toMatchObject({ contentType: FORM, what: 'Check payment status', threadTs: parent.ts });
    const body = fields(sent[0]);
    expect(body).toEqual({
      type: 'message_action',
      token: 'demo-verification-token',
      action_ts: expect.any(String),
      team: { id: 'T0DEMO', domain: 'demo' },
      user: { id: 'U0YOU', username: 'you', name: 'you', team_id: 'T0DEMO' },
      channel: { id: 'C0PAYMENTS', name: 'payments' },
      is_enterprise_install: false,
      enterprise: null,
      callback_id: 'check_payment',
      trigger_id: expect.stringMatching(TRIGGER_ID),
      response_url: expect.any(String),
      message_ts: posted.ts,
      message: {
        type: 'message',
        user: 'U0YOU',
        text: 'reply',
        blocks: [],
        ts: posted.ts,
        thread_ts: parent.ts,
      },
    });
    expectAboutNow(body.action_ts);
    reply(body.response_url, { replace_original: true, text: 'found' });
    expect(workspace.messages.at(-1)).toMatchObject({ text: 'found', threadTs: parent.ts, user: 'U0BOT' });
    expect(workspace.messages).toHaveLength(3);
  });

  it('is not offered on an ephemeral message or one that is gone', async () => {
    const { workspace, sent, context } = demo();
    const ephemeral = workspace.add({ user: 'U0BOT', text: 'only you', ephemeral: true });
    await shortcut(context, ephemeral.ts);
    await shortcut(context, '1.000001');
    expect(sent).toEqual([]);
  });
});

describe('opening the App Home', () => {
  it('sends app_home_opened in its event envelope', async () => {
    const { sent, context } = demo();
    await openHome(context);
    expect(sent[0]).toMatchObject({ contentType: 'application/json', what: 'The App Home' });
    const body = fields(sent[0]);
    expect(body).toMatchObject({
      token: 'demo-verification-token',
      type: 'event_callback',
      authorizations: [{ team_id: 'T0DEMO', user_id: 'U0BOT', is_bot: true, is_enterprise_install: false }],
      event: { type: 'app_home_opened', user: 'U0YOU', channel: 'D0DEMOAPP', tab: 'home' },
    });
    const event = body.event as { event_ts: string };
    expectAboutNow(event.event_ts);
  });
});
