import { createHmac, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SHORTCUT_CHECK_PAYMENT } from '../views/shortcut.js';

/**
 * The demo's Slack: one workspace with one person (you), one private channel and the bot.
 * It plays both sides of docs/slack.md: the Web API the bot calls (under `apiUrl`) and the
 * response_url endpoints, and the requests Slack sends the bot (slash commands, button clicks,
 * the message shortcut, `link_shared` and `app_home_opened` events), each signed as Slack signs
 * them and sent to the bot's HTTP endpoint. It listens on loopback only.
 */

const DEMO_TEAM = 'T0DEMO';
export const DEMO_USER = 'U0YOU';
const DEMO_CHANNEL = 'C0PAYMENTS';
export const BOT_USER = 'U0BOT';
const BOT_ID = 'B0BOT';
export const SLACKBOT = 'USLACKBOT';
const APP_ID = 'A0DEMO';
const HOME_VIEW_ID = 'V0HOME';
/** The commands the app registers (manifest.yml); anything else is refused as Slack does. */
const COMMANDS = ['/balance', '/invoice'];
/** Slack waits this long for an acknowledgement, then tells the person the app did not answer. */
const ACK_WAIT_MS = 3000;
/** A response_url takes this many posts, within 30 minutes (docs/slack.md#response-url). */
const RESPONSE_URL_POSTS = 5;
const RESPONSE_URL_MS = 30 * 60_000;
const MAX_BODY_BYTES = 1024 * 1024;

/** Display names, for rendering mentions. */
export const DEMO_NAMES = {
  users: { [DEMO_USER]: 'you', [BOT_USER]: 'Crypto Payments', [SLACKBOT]: 'Slackbot' },
  channels: { [DEMO_CHANNEL]: 'payments' },
} as const;

export interface DemoMessage {
  ts: string;
  /** The parent's ts, for a reply in a thread. */
  threadTs: string | undefined;
  user: string;
  text: string;
  blocks: unknown[];
  /** Shown only to you ("Only visible to you"), as responses are unless `in_channel`. */
  ephemeral: boolean;
  /** A slash command as you typed it: Slack keeps no message for it, the demo shows it to you. */
  command: boolean;
  edited: boolean;
  metadata: unknown;
  /** Cards the bot attached with `chat.unfurl`, per pasted link. */
  unfurls: { url: string; blocks: unknown[] }[];
}

/** Where a click comes from: a message's blocks, a card unfurled under it, or the App Home. */
export type ClickPlace = { kind: 'message' | 'unfurl'; ts: string } | { kind: 'home' };

export interface DemoSlack {
  readonly apiUrl: string;
  readonly botToken: string;
  readonly signingSecret: string;
  /** Messages in the channel, oldest first, thread replies included. */
  readonly messages: readonly DemoMessage[];
  /** The blocks of your App Home, once the bot has published it. */
  readonly home: unknown[] | undefined;
  /** Whether the bot has been connected and takes requests. */
  readonly ready: boolean;
  /** From now on, Slack's requests go to the bot at this address (`…/slack/events`). */
  connect(eventsUrl: string): void;
  /** Called after every change anyone can see. */
  onChange(listener: () => void): () => void;
  /** What you type in the message box: a slash command, or a message (its links unfurled). */
  say(text: string): Promise<void>;
  /** A click on the button `actionId` of block `blockId` at `place`. */
  click(place: ClickPlace, blockId: string, actionId: string): Promise<void>;
  /** The "Check payment status" message shortcut on a message. */
  shortcut(ts: string): Promise<void>;
  /** Opening the app's Home tab. */
  openHome(): Promise<void>;
  close(): Promise<void>;
}

export interface DemoSlackOptions {
  /** Hosts whose links the app unfurls (its manifest's `unfurl_domains`). */
  unfurlHosts: readonly string[];
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** Arguments the Web API client sends as JSON inside its form fields. */
const JSON_ARGS = new Set(['blocks', 'attachments', 'unfurls', 'view', 'metadata']);

function parseArgs(raw: string, contentType: string | undefined): Json {
  if (contentType?.includes('application/json')) {
    const parsed: unknown = raw ? JSON.parse(raw) : {};
    return isObject(parsed) ? parsed : {};
  }
  const args: Json = {};
  for (const [key, value] of new URLSearchParams(raw))
    args[key] = JSON_ARGS.has(key) ? JSON.parse(value) : value;
  return args;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error('body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Text you typed, as Slack stores it: `&`, `<`, `>` escaped, links wrapped in `<…>`. */
function typedText(text: string): { text: string; links: string[] } {
  const links: string[] = [];
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const linked = escaped.replace(/https?:\/\/[^\s<>|]+/g, (found) => {
    // A link typed in a sentence ends before its punctuation: "…/pay/<id>, thanks".
    const url = found.replace(/[.,;:!?)\]]+$/, '');
    links.push(url.replace(/&amp;/g, '&'));
    return `<${url}>${found.slice(url.length)}`;
  });
  return { text: linked, links };
}

export async function startDemoSlack(options: DemoSlackOptions): Promise<DemoSlack> {
  const botToken = `xoxb-demo-${randomUUID()}`;
  const signingSecret = randomUUID().replace(/-/g, '');
  let messages: DemoMessage[] = [];
  let home: unknown[] | undefined;
  let eventsUrl: string | undefined;
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const listener of listeners) listener();
  };
  /** Each response_url: where its posts go and how many it may still take. */
  const responseTargets = new Map<
    string,
    { sourceTs: string | undefined; threadTs: string | undefined; left: number; until: number }
  >();
  let lastTs = 0;
  /** Unique, increasing timestamps, as Slack's `ts` are. */
  const nextTs = () => {
    lastTs = Math.max(lastTs + 1, Date.now() * 1000);
    return `${Math.floor(lastTs / 1_000_000)}.${String(lastTs % 1_000_000).padStart(6, '0')}`;
  };
  const find = (ts: string | undefined) => messages.find((m) => m.ts === ts);

  function add(message: Partial<DemoMessage> & Pick<DemoMessage, 'user' | 'text'>): DemoMessage {
    const full: DemoMessage = {
      ts: nextTs(),
      threadTs: undefined,
      blocks: [],
      ephemeral: false,
      command: false,
      edited: false,
      metadata: undefined,
      unfurls: [],
      ...message,
    };
    messages.push(full);
    changed();
    return full;
  }

  /** A note from Slack itself, as Slackbot shows them: only to you. */
  const notice = (text: string, threadTs?: string) =>
    add({ user: SLACKBOT, text, ephemeral: true, threadTs });

  function responseUrl(sourceTs: string | undefined, threadTs: string | undefined): string {
    const id = randomUUID();
    responseTargets.set(id, {
      sourceTs,
      threadTs,
      left: RESPONSE_URL_POSTS,
      until: Date.now() + RESPONSE_URL_MS,
    });
    return `${base}/response/${id}`;
  }

  /** A message sent to a response_url, or in a command's acknowledgement. */
  function respond(target: { sourceTs: string | undefined; threadTs: string | undefined }, body: Json): void {
    const source = find(target.sourceTs);
    if (body.delete_original === true) {
      if (source) messages = messages.filter((m) => m !== source);
    } else if (body.replace_original === true && source) {
      source.text = str(body.text) ?? '';
      source.blocks = Array.isArray(body.blocks) ? body.blocks : [];
    } else {
      add({
        user: BOT_USER,
        text: str(body.text) ?? '',
        blocks: Array.isArray(body.blocks) ? body.blocks : [],
        ephemeral: body.response_type !== 'in_channel',
        threadTs: str(body.thread_ts) ?? target.threadTs,
      });
      return;
    }
    changed();
  }

  /** Sends a request to the bot, signed; says so the way Slack does when the bot does not take it. */
  async function send(
    body: string,
    contentType: string,
    what: string,
    threadTs?: string,
  ): Promise<string | undefined> {
    if (!eventsUrl) {
      notice('The bot is still starting. Try again in a moment.', threadTs);
      return undefined;
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    try {
      const response = await fetch(eventsUrl, {
        method: 'POST',
        headers: {
          'content-type': contentType,
          'x-slack-request-timestamp': String(timestamp),
          'x-slack-signature': signature,
        },
        body,
        signal: AbortSignal.timeout(ACK_WAIT_MS),
      });
      const text = await response.text();
      if (response.ok) return text;
      notice(`${what} failed with the error "dispatch_failed" (HTTP ${response.status})`, threadTs);
    } catch {
      notice(`${what} failed with the error "operation_timeout"`, threadTs);
    }
    return undefined;
  }

  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const payloadForm = (payload: Json) => form({ payload: JSON.stringify(payload) });
  const user = { id: DEMO_USER, username: 'you', name: 'you', team_id: DEMO_TEAM };
  const team = { id: DEMO_TEAM, domain: 'demo' };
  const channel = { id: DEMO_CHANNEL, name: 'payments' };
  const triggerId = () => `${Date.now()}.${randomUUID().slice(0, 8)}`;
  const asPayloadMessage = (m: DemoMessage) => ({
    type: 'message',
    ...(m.user === BOT_USER ? { bot_id: BOT_ID, user: BOT_USER } : { user: m.user }),
    text: m.text,
    blocks: m.blocks,
    ts: m.ts,
    ...(m.threadTs ? { thread_ts: m.threadTs } : {}),
  });

  async function command(name: string, text: string, typed: string): Promise<void> {
    add({ user: DEMO_USER, text: typedText(typed).text, ephemeral: true, command: true });
    if (!COMMANDS.includes(name)) {
      notice(
        `\`${typedText(name).text}\` is not a valid command. In Slack, all messages that start with the "/" character are interpreted as commands.`,
      );
      return;
    }
    const target = { sourceTs: undefined, threadTs: undefined };
    const ack = await send(
      form({
        token: 'demo-verification-token',
        team_id: DEMO_TEAM,
        team_domain: 'demo',
        channel_id: DEMO_CHANNEL,
        channel_name: 'payments',
        user_id: DEMO_USER,
        user_name: 'you',
        command: name,
        text,
        api_app_id: APP_ID,
        is_enterprise_install: 'false',
        response_url: responseUrl(undefined, undefined),
        trigger_id: triggerId(),
      }),
      'application/x-www-form-urlencoded',
      name,
    );
    // A command's reply may ride in its acknowledgement (docs/slack.md#ack); an empty one carries none.
    if (ack) {
      let body: unknown;
      try {
        body = JSON.parse(ack);
      } catch {
        return void notice(`${name} failed with the error "invalid_ack"`);
      }
      if (isObject(body) && (body.text !== undefined || body.blocks !== undefined)) respond(target, body);
    }
  }

  async function message(text: string): Promise<void> {
    const typed = typedText(text);
    const posted = add({ user: DEMO_USER, text: typed.text });
    const links = typed.links.filter((url) => options.unfurlHosts.includes(new URL(url).host));
    if (links.length === 0) return;
    await send(
      event({
        type: 'link_shared',
        channel: DEMO_CHANNEL,
        is_bot_user_member: true,
        user: DEMO_USER,
        message_ts: posted.ts,
        unfurl_id: `${DEMO_CHANNEL}.${posted.ts}`,
        source: 'conversations_history',
        event_ts: posted.ts,
        links: links.map((url) => ({ domain: new URL(url).hostname, url })),
      }),
      'application/json',
      'Unfurling the link',
    );
  }

  function event(event: Json): string {
    return JSON.stringify({
      token: 'demo-verification-token',
      team_id: DEMO_TEAM,
      api_app_id: APP_ID,
      type: 'event_callback',
      event_id: `Ev${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [{ team_id: DEMO_TEAM, user_id: BOT_USER, is_bot: true, is_enterprise_install: false }],
      event,
    });
  }

  /** The button `actionId` in block `blockId` among `blocks`, as Slack reports a click on it. */
  function button(blocks: unknown[], blockId: string, actionId: string): Json | undefined {
    for (const block of blocks) {
      if (!isObject(block) || (str(block.block_id) ?? '') !== blockId) continue;
      const elements = Array.isArray(block.elements) ? block.elements : [block.accessory];
      const found = elements.find((e) => isObject(e) && e.type === 'button' && e.action_id === actionId);
      if (isObject(found)) return found;
    }
    return undefined;
  }

  const WEB_API: Record<string, (args: Json) => Json> = {
    'auth.test': () => ({
      ok: true,
      url: 'http://demo.invalid/',
      team: 'Demo',
      user: 'crypto_payments',
      team_id: DEMO_TEAM,
      user_id: BOT_USER,
      bot_id: BOT_ID,
    }),
    'users.info': (args) => {
      const id = str(args.user) ?? '';
      const name = (DEMO_NAMES.users as Record<string, string>)[id];
      return name === undefined
        ? { ok: false, error: 'user_not_found' }
        : { ok: true, user: { id, team_id: DEMO_TEAM, name, is_bot: id === BOT_USER } };
    },
    'chat.postMessage': (args) => {
      if (args.channel !== DEMO_CHANNEL) return { ok: false, error: 'channel_not_found' };
      const threadTs = str(args.thread_ts);
      if (threadTs !== undefined && !find(threadTs)) return { ok: false, error: 'thread_not_found' };
      const posted = add({
        user: BOT_USER,
        text: str(args.text) ?? '',
        blocks: Array.isArray(args.blocks) ? args.blocks : [],
        threadTs,
        metadata: args.metadata,
      });
      return { ok: true, channel: DEMO_CHANNEL, ts: posted.ts };
    },
    'chat.update': (args) => {
      const target = args.channel === DEMO_CHANNEL ? find(str(args.ts)) : undefined;
      if (!target) return { ok: false, error: 'message_not_found' };
      if (target.user !== BOT_USER || target.ephemeral) return { ok: false, error: 'cant_update_message' };
      target.text = str(args.text) ?? '';
      target.blocks = Array.isArray(args.blocks) ? args.blocks : [];
      if (args.metadata !== undefined) target.metadata = args.metadata;
      target.edited = true;
      changed();
      return { ok: true, channel: DEMO_CHANNEL, ts: target.ts };
    },
    'chat.delete': (args) => {
      const target = args.channel === DEMO_CHANNEL ? find(str(args.ts)) : undefined;
      if (!target) return { ok: false, error: 'message_not_found' };
      messages = messages.filter((m) => m !== target && m.threadTs !== target.ts);
      changed();
      return { ok: true, channel: DEMO_CHANNEL, ts: target.ts };
    },
    'conversations.history': (args) => history(args, undefined),
    'conversations.replies': (args) => history(args, str(args.ts)),
    'conversations.info': (args) =>
      args.channel === DEMO_CHANNEL
        ? {
            ok: true,
            channel: {
              id: DEMO_CHANNEL,
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
          }
        : { ok: false, error: 'channel_not_found' },
    'views.publish': (args) => {
      const view = args.view;
      if (args.user_id !== DEMO_USER) return { ok: false, error: 'user_not_found' };
      if (!isObject(view) || view.type !== 'home') return { ok: false, error: 'invalid_arguments' };
      home = Array.isArray(view.blocks) ? view.blocks : [];
      changed();
      return { ok: true, view: { id: HOME_VIEW_ID, ...view } };
    },
    'chat.unfurl': (args) => {
      const ts = str(args.ts) ?? str(args.unfurl_id)?.split('.').slice(1).join('.');
      const target = find(ts);
      if (!target) return { ok: false, error: 'cannot_unfurl_message' };
      const unfurls = isObject(args.unfurls) ? args.unfurls : {};
      target.unfurls = Object.entries(unfurls).map(([url, card]) => ({
        url,
        blocks: isObject(card) && Array.isArray(card.blocks) ? card.blocks : [],
      }));
      changed();
      return { ok: true };
    },
  };

  function history(args: Json, threadTs: string | undefined): Json {
    if (args.channel !== DEMO_CHANNEL) return { ok: false, error: 'channel_not_found' };
    const oldest = Number(args.oldest ?? 0);
    const latest = args.latest === undefined ? Number.POSITIVE_INFINITY : Number(args.latest);
    const found = messages.filter(
      (m) =>
        !m.ephemeral &&
        Number(m.ts) >= oldest &&
        Number(m.ts) <= latest &&
        (threadTs === undefined ? m.threadTs === undefined : m.ts === threadTs || m.threadTs === threadTs),
    );
    return {
      ok: true,
      messages: found.map((m) => ({ ...asPayloadMessage(m), metadata: m.metadata })),
      has_more: false,
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://slack').pathname;
    const raw = await readBody(req);
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    };
    if (req.method === 'POST' && path.startsWith('/api/')) {
      if (req.headers.authorization !== `Bearer ${botToken}`)
        return json(200, { ok: false, error: 'invalid_auth' });
      const method = WEB_API[path.slice('/api/'.length)];
      return json(
        200,
        method ? method(parseArgs(raw, req.headers['content-type'])) : { ok: false, error: 'unknown_method' },
      );
    }
    const responseId = /^\/response\/([0-9a-f-]+)$/.exec(path)?.[1];
    const target = responseId === undefined ? undefined : responseTargets.get(responseId);
    if (req.method === 'POST' && target) {
      if (target.left <= 0 || Date.now() > target.until) return void res.writeHead(404).end('used_url');
      const body: unknown = JSON.parse(raw);
      if (!isObject(body)) return void res.writeHead(400).end('invalid_payload');
      target.left -= 1;
      respond(target, body);
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    }
    res.writeHead(404).end();
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(400).end('invalid_payload');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    apiUrl: `${base}/api/`,
    botToken,
    signingSecret,
    get messages() {
      return messages;
    },
    get home() {
      return home;
    },
    get ready() {
      return eventsUrl !== undefined;
    },
    connect(url) {
      eventsUrl = url;
      changed();
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async say(text) {
      const trimmed = text.trim();
      if (trimmed === '') return;
      const slash = /^(\/\S+)\s*([\s\S]*)$/.exec(trimmed);
      if (slash) return command((slash[1] ?? '').toLowerCase(), slash[2] ?? '', trimmed);
      return message(trimmed);
    },
    async click(place, blockId, actionId) {
      const source = place.kind === 'home' ? undefined : find(place.ts);
      const blocks =
        place.kind === 'home'
          ? (home ?? [])
          : place.kind === 'unfurl'
            ? (source?.unfurls.flatMap((u) => u.blocks) ?? [])
            : (source?.blocks ?? []);
      const found = button(blocks, blockId, actionId);
      if (!found || (place.kind !== 'home' && !source)) return;
      const action = { ...found, block_id: blockId, action_ts: `${Date.now() / 1000}` };
      const common = {
        type: 'block_actions',
        user,
        api_app_id: APP_ID,
        token: 'demo-verification-token',
        team,
      };
      const threadTs = source?.threadTs;
      const payload: Json =
        place.kind === 'home' || !source
          ? {
              ...common,
              // A click in a view carries the view and no response_url (docs/slack.md#app-home).
              container: { type: 'view', view_id: HOME_VIEW_ID },
              trigger_id: triggerId(),
              view: { id: HOME_VIEW_ID, type: 'home', blocks: home ?? [] },
              actions: [action],
            }
          : {
              ...common,
              container:
                place.kind === 'unfurl'
                  ? {
                      type: 'message_attachment',
                      message_ts: source.ts,
                      channel_id: DEMO_CHANNEL,
                      is_ephemeral: source.ephemeral,
                      is_app_unfurl: true,
                    }
                  : {
                      type: 'message',
                      message_ts: source.ts,
                      channel_id: DEMO_CHANNEL,
                      is_ephemeral: source.ephemeral,
                    },
              trigger_id: triggerId(),
              channel,
              ...(source.ephemeral ? {} : { message: asPayloadMessage(source) }),
              response_url: responseUrl(place.kind === 'message' ? source.ts : undefined, threadTs),
              actions: [action],
            };
      await send(payloadForm(payload), 'application/x-www-form-urlencoded', 'The button', threadTs);
    },
    async shortcut(ts) {
      const source = find(ts);
      if (!source || source.ephemeral) return;
      await send(
        payloadForm({
          type: 'message_action',
          token: 'demo-verification-token',
          action_ts: `${Date.now() / 1000}`,
          team,
          user,
          channel,
          is_enterprise_install: false,
          enterprise: null,
          callback_id: SHORTCUT_CHECK_PAYMENT,
          trigger_id: triggerId(),
          response_url: responseUrl(undefined, source.threadTs),
          message_ts: source.ts,
          message: asPayloadMessage(source),
        }),
        'application/x-www-form-urlencoded',
        'Check payment status',
        source.threadTs,
      );
    },
    async openHome() {
      await send(
        event({
          type: 'app_home_opened',
          user: DEMO_USER,
          channel: 'D0DEMOAPP',
          tab: 'home',
          event_ts: `${Date.now() / 1000}`,
        }),
        'application/json',
        'The App Home',
      );
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
