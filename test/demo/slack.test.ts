import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DemoSlack, startDemoSlack } from '../../src/demo/slack.js';
import { signatureProblem } from '../../src/http/slack-receiver.js';

/**
 * The demo's Slack against a stand-in bot on port 0: what it sends the bot (checked with the
 * bot's own signature check), and what it does with the bot's Web API calls and replies.
 */

interface Received {
  contentType: string | undefined;
  body: Record<string, unknown>;
  signed: boolean;
}

let slack: DemoSlack;
let bot: Server;
const received: Received[] = [];
/** What the stand-in bot acknowledges with; empty by default. */
let ackBody = '';

const readBody = async (req: IncomingMessage) => {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  return raw;
};

beforeEach(async () => {
  received.length = 0;
  ackBody = '';
  slack = await startDemoSlack({ unfurlHosts: ['pay.example:8080'] });
  bot = createServer(async (req, res) => {
    const raw = await readBody(req);
    const contentType = req.headers['content-type'];
    const form = new URLSearchParams(raw);
    const body = contentType?.includes('json')
      ? JSON.parse(raw)
      : form.has('payload')
        ? JSON.parse(form.get('payload') ?? '')
        : Object.fromEntries(form);
    const signed =
      signatureProblem(
        slack.signingSecret,
        {
          signature: String(req.headers['x-slack-signature']),
          timestamp: String(req.headers['x-slack-request-timestamp']),
        },
        raw,
        Math.floor(Date.now() / 1000),
      ) === undefined;
    received.push({ contentType, body, signed });
    res.writeHead(200, { 'content-type': 'application/json' }).end(ackBody);
  });
  bot.listen(0, '127.0.0.1');
  await once(bot, 'listening');
  slack.connect(`http://127.0.0.1:${(bot.address() as AddressInfo).port}/slack/events`);
});

afterEach(async () => {
  bot.closeAllConnections();
  bot.close();
  await slack.close();
});

async function api(method: string, args: Record<string, unknown>, token = slack.botToken) {
  const response = await fetch(`${slack.apiUrl}${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(args),
  });
  return (await response.json()) as Record<string, unknown>;
}

const respond = (url: string, body: Record<string, unknown>) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const visible = () => slack.messages.map((m) => ({ text: m.text, ephemeral: m.ephemeral, user: m.user }));

describe('what the demo’s Slack sends the bot', () => {
  it('a slash command, form-encoded and signed; a reply in the ack is shown, in the channel when asked', async () => {
    ackBody = JSON.stringify({ response_type: 'in_channel', text: 'card', blocks: [{ type: 'divider' }] });
    await slack.say('/Invoice  watch 5b8e');
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      contentType: 'application/x-www-form-urlencoded',
      signed: true,
      body: {
        command: '/invoice',
        text: 'watch 5b8e',
        user_id: 'U0YOU',
        channel_id: 'C0PAYMENTS',
        team_id: 'T0DEMO',
      },
    });
    expect(visible()).toEqual([
      { text: '/Invoice  watch 5b8e', ephemeral: true, user: 'U0YOU' },
      { text: 'card', ephemeral: false, user: 'U0BOT' },
    ]);
    expect(slack.messages[1]?.blocks).toEqual([{ type: 'divider' }]);
  });

  it('refuses a command the app does not have, as Slack does, without asking the bot', async () => {
    await slack.say('/weather');
    expect(received).toEqual([]);
    expect(slack.messages.at(-1)?.text).toContain('`/weather` is not a valid command');
  });

  it('a pasted link on the unfurl domain: the message as Slack stores it, and a link_shared event', async () => {
    await slack.say('see <this> http://pay.example:8080/pay/abc, and https://elsewhere.example/pay/abc');
    const [message] = slack.messages;
    expect(message?.text).toBe(
      'see &lt;this&gt; <http://pay.example:8080/pay/abc>, and <https://elsewhere.example/pay/abc>',
    );
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      contentType: 'application/json',
      signed: true,
      body: {
        type: 'event_callback',
        event: {
          type: 'link_shared',
          channel: 'C0PAYMENTS',
          message_ts: message?.ts,
          links: [{ domain: 'pay.example', url: 'http://pay.example:8080/pay/abc' }],
        },
      },
    });
    const event = received[0]?.body.event as { unfurl_id: string; source: string };
    const card = { blocks: [{ type: 'header', text: { type: 'plain_text', text: 'Order' } }] };
    await api('chat.unfurl', {
      unfurl_id: event.unfurl_id,
      source: event.source,
      unfurls: { 'http://pay.example:8080/pay/abc': card },
    });
    expect(slack.messages[0]?.unfurls).toEqual([{ url: 'http://pay.example:8080/pay/abc', ...card }]);
  });

  it('a click: the button as shown, where it is, and a response_url that can replace the message in place', async () => {
    const watch = {
      type: 'button',
      action_id: 'watch_invoice',
      text: { type: 'plain_text', text: 'Watch' },
      value: 'id-1',
    };
    const { ts } = await api('chat.postMessage', {
      channel: 'C0PAYMENTS',
      text: 'card',
      blocks: [{ type: 'actions', block_id: 'invoice_actions', elements: [watch] }],
    });
    await slack.click({ kind: 'message', ts: String(ts) }, 'invoice_actions', 'watch_invoice');
    expect(received[0]).toMatchObject({
      signed: true,
      body: {
        type: 'block_actions',
        user: { id: 'U0YOU', team_id: 'T0DEMO' },
        container: { type: 'message', message_ts: ts, channel_id: 'C0PAYMENTS', is_ephemeral: false },
        message: { ts, text: 'card' },
        actions: [{ ...watch, block_id: 'invoice_actions' }],
      },
    });
    const url = String(received[0]?.body.response_url);
    await respond(url, { replace_original: true, text: 'replaced', blocks: [] });
    expect(visible()).toEqual([{ text: 'replaced', ephemeral: false, user: 'U0BOT' }]);

    await slack.click({ kind: 'message', ts: String(ts) }, 'invoice_actions', 'no_such_button');
    expect(received).toHaveLength(1);
  });

  it('a click in the App Home carries the view, and no response_url, as Slack’s do', async () => {
    await slack.openHome();
    expect(received[0]?.body.event).toMatchObject({ type: 'app_home_opened', user: 'U0YOU', tab: 'home' });
    const stop = {
      type: 'button',
      action_id: 'stop_watch:0',
      text: { type: 'plain_text', text: 'Stop' },
      value: 'w-1',
    };
    await api('views.publish', {
      user_id: 'U0YOU',
      view: {
        type: 'home',
        blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'w' }, accessory: stop }],
      },
    });
    await slack.click({ kind: 'home' }, '', 'stop_watch:0');
    expect(received[1]?.body).toMatchObject({ container: { type: 'view' }, actions: [stop] });
    expect(received[1]?.body).not.toHaveProperty('response_url');
  });

  it('the message shortcut on a message in a thread: its text and blocks, and answers go in that thread', async () => {
    const { ts: parent } = await api('chat.postMessage', { channel: 'C0PAYMENTS', text: 'parent' });
    const { ts } = await api('chat.postMessage', { channel: 'C0PAYMENTS', text: 'reply', thread_ts: parent });
    await slack.shortcut(String(ts));
    expect(received[0]?.body).toMatchObject({
      type: 'message_action',
      callback_id: 'check_payment',
      message: { ts, thread_ts: parent, text: 'reply' },
    });
    await respond(String(received[0]?.body.response_url), { text: 'found' });
    expect(slack.messages.at(-1)).toMatchObject({ text: 'found', ephemeral: true, threadTs: parent });
  });

  it('says the bot is starting when it is not connected yet', async () => {
    const fresh = await startDemoSlack({ unfurlHosts: [] });
    try {
      expect(fresh.ready).toBe(false);
      await fresh.say('/balance');
      expect(fresh.messages.at(-1)).toMatchObject({ user: 'USLACKBOT', ephemeral: true });
      expect(fresh.messages.at(-1)?.text).toContain('still starting');
    } finally {
      await fresh.close();
    }
  });
});

describe('what the demo’s Slack does with the bot’s calls', () => {
  it('refuses a wrong token', async () => {
    expect(await api('auth.test', {}, 'xoxb-wrong')).toEqual({ ok: false, error: 'invalid_auth' });
    expect(await api('auth.test', {})).toMatchObject({ ok: true, team_id: 'T0DEMO', user_id: 'U0BOT' });
  });

  it('takes form-encoded calls with JSON fields, as the Web API client sends them', async () => {
    const response = await fetch(`${slack.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${slack.botToken}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        channel: 'C0PAYMENTS',
        text: '[not json]',
        blocks: '[{"type":"divider"}]',
      }),
    });
    expect(await response.json()).toMatchObject({ ok: true });
    expect(slack.messages[0]).toMatchObject({ text: '[not json]', blocks: [{ type: 'divider' }] });
  });

  it('edits a posted message in place, marked edited; not one that is ephemeral or gone', async () => {
    const { ts } = await api('chat.postMessage', { channel: 'C0PAYMENTS', text: 'v1' });
    expect(await api('chat.update', { channel: 'C0PAYMENTS', ts, text: 'v2' })).toMatchObject({ ok: true });
    expect(slack.messages).toHaveLength(1);
    expect(slack.messages[0]).toMatchObject({ text: 'v2', edited: true });
    await slack.say('/weather');
    const ephemeral = slack.messages.at(-1)?.ts;
    expect(await api('chat.update', { channel: 'C0PAYMENTS', ts: ephemeral, text: 'x' })).toEqual({
      ok: false,
      error: 'cant_update_message',
    });
    expect(await api('chat.update', { channel: 'C0PAYMENTS', ts: '1.000001', text: 'x' })).toEqual({
      ok: false,
      error: 'message_not_found',
    });
  });

  it('finds the bot’s messages by metadata in history and threads, never ephemeral ones', async () => {
    const metadata = { event_type: 'payments_bot_message', event_payload: { id: 'm1' } };
    const { ts: parent } = await api('chat.postMessage', { channel: 'C0PAYMENTS', text: 'card', metadata });
    const { ts: reply } = await api('chat.postMessage', {
      channel: 'C0PAYMENTS',
      text: 'r',
      thread_ts: parent,
    });
    await slack.say('/weather');
    const history = await api('conversations.history', { channel: 'C0PAYMENTS', oldest: '0' });
    expect(history.messages).toEqual([expect.objectContaining({ ts: parent, metadata })]);
    const replies = await api('conversations.replies', { channel: 'C0PAYMENTS', ts: parent });
    expect((replies.messages as { ts: string }[]).map((m) => m.ts)).toEqual([parent, reply]);
    const before = await api('conversations.history', { channel: 'C0PAYMENTS', latest: '1' });
    expect(before.messages).toEqual([]);
  });

  it('a response_url takes five posts, then refuses', async () => {
    await slack.say('/balance');
    const url = String(received[0]?.body.response_url);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await respond(url, { text: `r${i}` })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 404]);
    expect(slack.messages.filter((m) => m.user === 'U0BOT' && m.ephemeral)).toHaveLength(5);
  });

  it('tells a private channel, so the payments feed may post there', async () => {
    expect(await api('conversations.info', { channel: 'C0PAYMENTS' })).toMatchObject({
      channel: { is_private: true, is_im: false, is_ext_shared: false },
    });
    expect(await api('conversations.info', { channel: 'C0OTHER' })).toEqual({
      ok: false,
      error: 'channel_not_found',
    });
  });
});
