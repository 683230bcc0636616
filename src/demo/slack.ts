import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BotEndpoint } from './bot-endpoint.js';
import { openEntity, panelClick } from './entities.js';
import { submitModal } from './modal.js';
import { click, openHome, type RequestContext, say, shortcut } from './requests.js';
import { ResponseUrls } from './response-urls.js';
import { parseArgs, type WebApiMethod, webApi } from './web-api.js';
import {
  type ClickPlace,
  type DemoMessage,
  type DemoModal,
  type Flexpane,
  type PageInput,
  Workspace,
} from './workspace.js';

/**
 * The demo's Slack: one workspace with one person (you), one private channel and the bot
 * (src/demo/workspace.ts). It plays both sides of docs/slack.md: the Web API the bot calls
 * (under `apiUrl`, src/demo/web-api.ts) and the response_url endpoints
 * (src/demo/response-urls.ts), and the requests Slack sends the bot (slash commands, button
 * clicks, the message shortcut, `link_shared` and `app_home_opened` events:
 * src/demo/requests.ts), each signed as Slack signs them and sent to the bot's HTTP endpoint
 * (src/demo/bot-endpoint.ts). It listens on loopback only.
 */

const MAX_BODY_BYTES = 1024 * 1024;

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
  /** The side panel of a Work Object, as the bot last presented it; undefined when closed. */
  readonly flexpane: Flexpane | undefined;
  /** A click on a Work Object's card (`entity_details_requested`), on a button of its panel, or its close. */
  openEntity(ts: string, refId: string, url: string): Promise<void>;
  panelClick(actionId: string): Promise<void>;
  closePanel(): void;
  /** The modal the bot opened for you, until it is closed (src/demo/modal.ts). */
  readonly modal: DemoModal | undefined;
  /** Save on the modal, with what you typed or picked in each input (by block id). */
  submitModal(typed: Record<string, PageInput>): Promise<void>;
  /** Cancel on the modal: it goes, and nothing is sent (the bot asks for no view_closed). */
  closeModal(): void;
  close(): Promise<void>;
}

interface DemoSlackOptions {
  /** Hosts whose links the app unfurls (its manifest's `unfurl_domains`). */
  unfurlHosts: readonly string[];
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

/** Answers the bot's Web API calls (`/api/<method>`) and its posts to response_urls. */
async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  {
    botToken,
    methods,
    responseUrls,
  }: { botToken: string; methods: Record<string, WebApiMethod>; responseUrls: ResponseUrls },
): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://slack').pathname;
  const raw = await readBody(req);
  const json = (status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
  };
  if (req.method === 'POST' && path.startsWith('/api/')) {
    if (req.headers.authorization !== `Bearer ${botToken}`)
      return json(200, { ok: false, error: 'invalid_auth' });
    const method = methods[path.slice('/api/'.length)];
    return json(
      200,
      method ? method(parseArgs(raw, req.headers['content-type'])) : { ok: false, error: 'unknown_method' },
    );
  }
  const responseId = /^\/response\/([0-9a-f-]+)$/.exec(path)?.[1];
  if (req.method === 'POST' && responseId !== undefined && responseUrls.answer(responseId, raw, res)) return;
  res.writeHead(404).end();
}

export async function startDemoSlack(options: DemoSlackOptions): Promise<DemoSlack> {
  const botToken = `xoxb-demo-${randomUUID()}`;
  const workspace = new Workspace();
  const bot = new BotEndpoint(workspace);
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const responseUrls = new ResponseUrls(workspace, `${base}/response/`);
  const context: RequestContext = { workspace, bot, responseUrls, unfurlHosts: options.unfurlHosts };
  const routes = { botToken, methods: webApi(workspace), responseUrls };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res, routes).catch(() => {
      if (!res.headersSent) res.writeHead(400).end('invalid_payload');
    });
  });

  return {
    apiUrl: `${base}/api/`,
    botToken,
    signingSecret: bot.signingSecret,
    get messages() {
      return workspace.messages;
    },
    get home() {
      return workspace.home;
    },
    get ready() {
      return bot.ready;
    },
    connect: (url) => bot.connect(url),
    onChange: (listener) => workspace.onChange(listener),
    say: (text) => say(context, text),
    click: (place, blockId, actionId) => click(context, place, blockId, actionId),
    shortcut: (ts) => shortcut(context, ts),
    openHome: () => openHome(context),
    get flexpane() {
      return workspace.flexpane;
    },
    openEntity: (ts, refId, url) => openEntity(context, ts, refId, url),
    panelClick: (actionId) => panelClick(context, actionId),
    closePanel: () => {
      workspace.flexpane = undefined;
      workspace.changed();
    },
    get modal() {
      return workspace.modal;
    },
    submitModal: (typed) => submitModal(context, typed),
    closeModal() {
      workspace.modal = undefined;
      workspace.changed();
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
