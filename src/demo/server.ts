import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { num, type WireInvoice } from '../sandbox/data.js';
import { coinOf } from '../sandbox/payment.js';
import type { Sandbox } from '../sandbox/server.js';
import { DIGEST_PANEL } from './digest-now.js';
import { ENTITY_CSS, entityCardsHtml, flexpaneHtml } from './entities.js';
import { pageInputs } from './modal.js';
import { PAGE_CSS, PAGE_SCRIPT, pageHtml, type Suggestion } from './page.js';
import { escapeHtml, renderBlocks, renderMrkdwn } from './render.js';
import { renderModal } from './render-modal.js';
import type { DemoSlack } from './slack.js';
import { BOT_USER, type ClickPlace, DEMO_NAMES, DEMO_USER, type DemoMessage, SLACKBOT } from './workspace.js';

/**
 * The page a person opens (`http://127.0.0.1:3000/`): the channel, the App Home and the side
 * panel rendered to HTML, pushed as they change (server-sent events), and what the person does
 * handed to the Slack stand-in (src/demo/slack.ts) or to the sandbox payment service.
 */

export interface PageServer {
  /** The address to open. */
  readonly url: string;
  close(): Promise<void>;
}

interface PageServerOptions {
  host: string;
  port: number;
  slack: DemoSlack;
  sandbox: Sandbox;
  /** "Post today's digest now" (src/demo/digest-now.ts): what to tell the person when it cannot. */
  digestNow?: () => Promise<string | undefined>;
}

const SECURITY_HEADERS = {
  // Nothing but this page's own origin: no CDN, no inline script, no image from elsewhere.
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const MAX_BODY_BYTES = 64 * 1024;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
/** The host name of a Host header, without its port. */
const hostOf = (header: string | undefined) =>
  /^(\[[^\]]*\]|[^:]*)/.exec(header ?? '')?.[1]?.toLowerCase() ?? '';
/** A balance as the service writes it: digits, with an optional fraction. */
const DECIMAL = /^\d{1,30}(\.\d{1,30})?$/;

class BadRequest extends Error {}

/**
 * The person's changes to an invoice, made on the sandbox as the real service would make them:
 * paid, its amount arrives in the balance of the coin it was paid in (so the payments feed
 * follows); expired, its expiry is now.
 */
const INVOICE_CHANGES: Readonly<Record<string, (sandbox: Sandbox, invoice: WireInvoice) => void>> = {
  paid: (sandbox, invoice) => {
    if (coinOf(invoice) === undefined) throw new BadRequest('this invoice cannot be paid now');
    sandbox.payInvoice(invoice.id);
  },
  expired: (sandbox, invoice) =>
    sandbox.updateInvoice(invoice.id, { status: 'expired', timeout: new Date().toISOString() }),
};

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  // Only JSON: a page elsewhere cannot send it here without the browser asking first (CORS).
  if (!req.headers['content-type']?.startsWith('application/json')) throw new BadRequest('send JSON');
  let raw = '';
  for await (const chunk of req as AsyncIterable<Buffer>) {
    raw += chunk.toString('utf8');
    if (raw.length > MAX_BODY_BYTES) throw new BadRequest('too large');
  }
  let body: unknown;
  try {
    body = JSON.parse(raw || '{}');
  } catch {
    throw new BadRequest('not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BadRequest('not an object');
  return body as Record<string, unknown>;
}

const text = (body: Record<string, unknown>, key: string): string => {
  const value = body[key];
  if (typeof value !== 'string') throw new BadRequest(`${key} is missing`);
  return value;
};

function placeOf(body: Record<string, unknown>): ClickPlace {
  const kind = text(body, 'place');
  if (kind === 'home') return { kind };
  if (kind === 'message' || kind === 'unfurl') return { kind, ts: text(body, 'ts') };
  throw new BadRequest('unknown place');
}

const PEOPLE: Readonly<Record<string, { name: string; avatar: string; css: string; app: boolean }>> = {
  [DEMO_USER]: { name: 'you', avatar: 'Y', css: '', app: false },
  [BOT_USER]: { name: 'Crypto Payments', avatar: 'CP', css: 'bot', app: true },
  [SLACKBOT]: { name: 'Slackbot', avatar: 'S', css: 'slackbot', app: false },
};

function messageHtml(message: DemoMessage, replies: readonly DemoMessage[]): string {
  const who = PEOPLE[message.user] ?? { name: message.user, avatar: '?', css: '', app: false };
  const seconds = message.ts.split('.')[0] ?? '0';
  const meta = [
    `<span class="msg-name">${escapeHtml(who.name)}</span>`,
    who.app ? '<span class="app-tag">APP</span>' : '',
    `<time class="bk-date msg-time" data-ts="${seconds}" data-format="{time}" datetime="${new Date(Number(seconds) * 1000).toISOString()}"></time>`,
    message.edited ? '<span class="edited">(edited)</span>' : '',
    message.ephemeral ? '<span class="only-you">Only visible to you</span>' : '',
  ].join('');
  const content =
    message.blocks.length > 0
      ? renderBlocks(message.blocks, DEMO_NAMES)
      : renderMrkdwn(message.text, DEMO_NAMES);
  const unfurls = message.unfurls
    .map(
      (u) =>
        `<div class="unfurl" data-place="unfurl" data-ts="${message.ts}"><div class="unfurl-url">${escapeHtml(u.url)}</div>${renderBlocks(u.blocks, DEMO_NAMES)}${entityCardsHtml(u.metadata, message.ts)}</div>`,
    )
    .join('');
  // Slack offers message shortcuts on messages everyone sees, not on ephemeral ones.
  const shortcut = message.ephemeral
    ? ''
    : `<button type="button" class="shortcut" data-shortcut="${message.ts}" title="Message shortcut">⋮ Check payment status</button>`;
  const thread =
    replies.length === 0
      ? ''
      : `<div class="thread"><div class="thread-count">${replies.length} ${replies.length === 1 ? 'reply' : 'replies'}</div>${replies.map((r) => messageHtml(r, [])).join('')}</div>`;
  const classes = ['msg', message.ephemeral ? 'ephemeral' : '', message.command ? 'command' : '']
    .filter(Boolean)
    .join(' ');
  return `<article class="${classes}" data-ts="${message.ts}"><div class="avatar ${who.css}">${who.avatar}</div><div class="msg-body"><div class="msg-meta">${meta}</div><div class="msg-content" data-place="message" data-ts="${message.ts}">${content}</div>${entityCardsHtml(message.metadata, message.ts)}${unfurls}${shortcut}${thread}</div></article>`;
}

/** The channel: top-level messages in order, each with its thread under it. */
function feedHtml(messages: readonly DemoMessage[]): string {
  if (messages.length === 0)
    return '<p class="muted empty">Nothing here yet. Type <code>/balance</code> below.</p>';
  const replies = new Map<string, DemoMessage[]>();
  for (const m of messages) if (m.threadTs) replies.set(m.threadTs, [...(replies.get(m.threadTs) ?? []), m]);
  return messages
    .filter((m) => m.threadTs === undefined || !messages.some((p) => p.ts === m.threadTs))
    .map((m) => messageHtml(m, replies.get(m.ts) ?? []))
    .join('');
}

/** Mark paid, when the customer can still pay it; its title says what arrives in the balance. */
function payButton(invoice: WireInvoice): string {
  const coin = coinOf(invoice);
  if (coin === undefined) return '';
  const arrives = `The customer pays: ${invoice.amount.toString()} ${coin} arrives in the balance`;
  return `<button type="button" data-invoice="${escapeHtml(invoice.id)}" data-change="paid" title="${escapeHtml(arrives)}">Mark paid</button>`;
}

function panelHtml(sandbox: Sandbox): string {
  const invoices = sandbox.current
    .map(
      (i) => `<div class="invoice" data-invoice-card="${escapeHtml(i.id)}">
<div class="invoice-title">${escapeHtml(i.title)}</div>
<div class="invoice-state">${escapeHtml(i.status)} · ${escapeHtml(i.payStatus)} · <code>${escapeHtml(i.amount.toString())}</code> ${escapeHtml(i.currency)}</div>
<div class="invoice-id">${escapeHtml(i.id)}</div>
<div class="row">
<button type="button" data-fill="/invoice ${escapeHtml(i.id)}">Ask /invoice</button>
<button type="button" data-fill="${escapeHtml(i.link)}">Paste its link</button>
${payButton(i)}
${i.status === 'expired' ? '' : `<button type="button" data-invoice="${escapeHtml(i.id)}" data-change="expired">Mark expired</button>`}
</div></div>`,
    )
    .join('');
  const balances = sandbox.balances
    .map(
      (b) => `<form class="balance" data-balance="${escapeHtml(b.id)}">
<label for="balance-${escapeHtml(b.id)}">${escapeHtml(b.title)} <span class="muted">${escapeHtml(b.id)}</span></label>
<input id="balance-${escapeHtml(b.id)}" name="balance" value="${escapeHtml(b.balance.toString())}" inputmode="decimal" aria-label="${escapeHtml(b.id)} balance">
<button type="submit">Set</button>
<span class="balance-error"></span>
</form>`,
    )
    .join('');
  return `<h3>Invoices</h3>${invoices}<h3>Balance</h3><p class="muted">Mark paid adds the invoice's amount to its coin here; set a balance as a withdrawal would; <code>/balance subscribe</code> posts each change in the channel.</p>${balances}${DIGEST_PANEL}<h3>Start over</h3><button type="button" class="reset" data-reset>Reset the invoices and balances</button>`;
}

/**
 * The page's server-sent events: a version, bumped at every change, pushed to every open page,
 * which then fetches the state.
 */
class PageUpdates {
  version = 0;
  readonly #streams = new Set<ServerResponse>();
  // Comments keep idle event streams open through proxies and sleeping laptops.
  readonly #keepAlive = setInterval(() => {
    for (const stream of this.#streams) stream.write(': ping\n\n');
  }, 25_000).unref();

  readonly bump = (): void => {
    this.version += 1;
    for (const stream of this.#streams) stream.write(`data: ${this.version}\n\n`);
  };

  /** Answers a GET of the event stream: it stays open until the page goes. */
  subscribe(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream' });
    res.write(`retry: 1000\ndata: ${this.version}\n\n`);
    this.#streams.add(res);
    req.on('close', () => this.#streams.delete(res));
  }

  close(): void {
    clearInterval(this.#keepAlive);
  }
}

/** Suggestions under the message box, about an open invoice of the sandbox's when there is one. */
function suggestionsFor(sandbox: Sandbox): Suggestion[] {
  const open = sandbox.current.find((i) => i.status === 'open') ?? sandbox.current[0];
  return [
    { label: '/balance', text: '/balance' },
    ...(open
      ? [
          { label: '/invoice <id>', text: `/invoice ${open.id}` },
          { label: '/invoice watch <id>', text: `/invoice watch ${open.id}` },
          { label: 'paste a payment link', text: `Could you check ${open.link} please?` },
        ]
      : []),
    { label: '/balance subscribe', text: '/balance subscribe' },
    { label: '/invoice watching', text: '/invoice watching' },
    { label: '/invoice help', text: '/invoice help' },
  ];
}

/** What the person did, by route; each resolves once it is done (the bot has acknowledged). */
function pageActions(
  slack: DemoSlack,
  sandbox: Sandbox,
  bump: () => void,
  digestNow?: PageServerOptions['digestNow'],
): Record<string, (body: Record<string, unknown>) => Promise<void> | void> {
  return {
    '/demo/say': (body) => slack.say(text(body, 'text')),
    '/demo/click': (body) =>
      slack.click(
        placeOf(body),
        typeof body.blockId === 'string' ? body.blockId : '',
        text(body, 'actionId'),
      ),
    '/demo/shortcut': (body) => slack.shortcut(text(body, 'ts')),
    '/demo/home': () => slack.openHome(),
    '/demo/submit': (body) => {
      const typed = pageInputs(body.values);
      if (!typed) throw new BadRequest('values is missing');
      return slack.submitModal(typed);
    },
    '/demo/close-modal': () => slack.closeModal(),
    '/demo/entity': (body) => slack.openEntity(text(body, 'ts'), text(body, 'ref'), text(body, 'url')),
    '/demo/panel': (body) => slack.panelClick(text(body, 'actionId')),
    '/demo/panel-close': () => slack.closePanel(),
    '/demo/invoice': (body) => {
      const change = INVOICE_CHANGES[text(body, 'change')];
      const id = text(body, 'id');
      const invoice = sandbox.current.find((i) => i.id === id);
      if (!change || !invoice) throw new BadRequest('no such invoice or change');
      change(sandbox, invoice);
      bump();
    },
    '/demo/balance': (body) => {
      const id = text(body, 'id');
      const balance = text(body, 'balance').trim();
      if (!DECIMAL.test(balance)) throw new BadRequest('digits, with a point for a fraction: 12.5');
      if (!sandbox.balances.some((b) => b.id === id)) throw new BadRequest('no such currency');
      sandbox.setBalances(sandbox.balances.map((b) => (b.id === id ? { ...b, balance: num(balance) } : b)));
      bump();
    },
    '/demo/digest': async () => {
      const problem = digestNow ? await digestNow() : 'not in this demo';
      if (problem) throw new BadRequest(problem);
    },
    '/demo/reset': () => {
      sandbox.reset();
      bump();
    },
  };
}

export async function startPageServer({
  host,
  port,
  slack,
  sandbox,
  digestNow,
}: PageServerOptions): Promise<PageServer> {
  /** The address to open, once listening. */
  let url = '';
  const updates = new PageUpdates();
  slack.onChange(updates.bump);
  const suggestions = suggestionsFor(sandbox);
  const assets: Record<string, { type: string; body: string }> = {
    '/': { type: 'text/html; charset=utf-8', body: pageHtml(suggestions) },
    '/demo.css': { type: 'text/css; charset=utf-8', body: PAGE_CSS + ENTITY_CSS },
    '/demo.js': { type: 'text/javascript; charset=utf-8', body: PAGE_SCRIPT },
  };

  const state = () => ({
    version: updates.version,
    ready: slack.ready,
    feed: feedHtml(slack.messages) + flexpaneHtml(slack.flexpane),
    home: slack.home === undefined ? null : renderBlocks(slack.home, DEMO_NAMES),
    modal: slack.modal === undefined ? null : renderModal(slack.modal, DEMO_NAMES),
    panel: panelHtml(sandbox),
  });

  const actions = pageActions(slack, sandbox, updates.bump, digestNow);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://demo').pathname;
    // On loopback, only a loopback name: a page elsewhere whose name was pointed at 127.0.0.1 gets nothing.
    if (LOOPBACK.has(host) && !LOOPBACK.has(hostOf(req.headers.host))) {
      res.writeHead(403, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
      return void res.end(`Open ${url}`);
    }
    const asset = assets[path];
    if (req.method === 'GET' && asset) {
      res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': asset.type });
      return void res.end(asset.body);
    }
    if (req.method === 'GET' && path === '/demo/state') {
      const body = JSON.stringify(state());
      res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8' });
      return void res.end(body);
    }
    if (req.method === 'GET' && path === '/demo/events') return updates.subscribe(req, res);
    const action = actions[path];
    if (req.method === 'POST' && action) {
      try {
        await action(await readJson(req));
      } catch (error) {
        if (!(error instanceof BadRequest)) throw error;
        res.writeHead(400, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
        return void res.end(error.message);
      }
      return void res.writeHead(204, SECURITY_HEADERS).end();
    }
    res.writeHead(404, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' }).end('not found');
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error(`demo page: ${req.method} ${req.url} failed:`, error);
      if (!res.headersSent) res.writeHead(500).end();
      else res.end();
    });
  });
  server.listen(port, host);
  await once(server, 'listening'); // rejects when the port is taken
  const { port: bound } = server.address() as AddressInfo;
  const shownHost =
    host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  url = `http://${shownHost}:${bound}/`;
  return {
    url,
    async close() {
      updates.close();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
