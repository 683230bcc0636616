/**
 * Block Kit → HTML for the local demo's page (docs: README → Try it in one minute). Pure and
 * small: it shows what the bot sends (header, section text and fields with a button beside,
 * context, divider, actions, images) the way Slack does, and anything else as a visible
 * placeholder, never dropped. Every string from a message ends up HTML-escaped: a title
 * `<script>` stays text. Charts and tables are drawn by render-data.ts.
 */
import { escapeHtml } from './html.js';
import { dataBlock, selectElement } from './render-data.js';

/** Display names for `<@U…>` and `<#C…>` mentions. */
interface RenderNames {
  users: Readonly<Record<string, string>>;
  channels: Readonly<Record<string, string>>;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string => (typeof value === 'string' ? value : '');

export { escapeHtml };

/** Slack's three entities back to characters (docs/slack.md#mrkdwn). */
const decodeSlack = (text: string) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The shortcodes the bot writes, and a few common ones; any other stays as typed. */
const EMOJI: Readonly<Record<string, string>> = {
  warning: '⚠️',
  moneybag: '💰',
  white_check_mark: '✅',
  eyes: '👀',
  x: '❌',
  hourglass: '⌛',
  bell: '🔔',
  tada: '🎉',
  lock: '🔒',
  '+1': '👍',
};
const withEmoji = (escaped: string) =>
  escaped.replace(/:([a-z0-9_+-]+):/g, (whole, name: string) => EMOJI[name] ?? whole);

/** An address safe to put in `href`: http(s) or mailto only. */
function safeHref(raw: string): string | undefined {
  if (!URL.canParse(raw)) return undefined;
  const { protocol } = new URL(raw);
  return protocol === 'http:' || protocol === 'https:' || protocol === 'mailto:' ? raw : undefined;
}

const anchor = (href: string, labelHtml: string) =>
  `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">${labelHtml}</a>`;

/** One `<…>` token of mrkdwn: a date, a mention, a link; anything else is shown as written. */
function token(inner: string, names: RenderNames): string {
  const [target = '', ...rest] = inner.split('|');
  const label = rest.length > 0 ? decodeSlack(rest.join('|')) : undefined;
  if (target.startsWith('!date^')) {
    const [seconds = '', format = '', link] = target.slice('!date^'.length).split('^');
    const fallback = label ?? '';
    const when = new Date(Number(seconds) * 1000);
    if (!/^\d+$/.test(seconds) || Number.isNaN(when.getTime())) return escapeHtml(fallback);
    const time = `<time class="bk-date" data-ts="${seconds}" data-format="${escapeHtml(decodeSlack(format))}" datetime="${when.toISOString()}">${escapeHtml(fallback)}</time>`;
    const href = link === undefined ? undefined : safeHref(decodeSlack(link));
    return href ? anchor(href, time) : time;
  }
  if (/^@[UW][A-Z0-9]+$/.test(target)) {
    const id = target.slice(1);
    return `<span class="bk-mention">@${escapeHtml(names.users[id] ?? label ?? id)}</span>`;
  }
  if (/^#[CGD][A-Z0-9]+$/.test(target)) {
    const id = target.slice(1);
    return `<span class="bk-mention">#${escapeHtml(names.channels[id] ?? label ?? id)}</span>`;
  }
  if (target.startsWith('!subteam^'))
    return `<span class="bk-mention">${escapeHtml(label ?? '@group')}</span>`;
  if (/^!(here|channel|everyone)$/.test(target))
    return `<span class="bk-mention">@${escapeHtml(target.slice(1))}</span>`;
  const href = safeHref(decodeSlack(target));
  if (href) return anchor(href, escapeHtml(label ?? href));
  return escapeHtml(decodeSlack(`<${inner}>`));
}

/** Characters that may stand before an opening `*`, `_` or `~` and after a closing one. */
const EDGE = String.raw`[^\p{L}\p{N}*_~]`;
/** Each marker as a regular expression source, with the element it makes. */
const STYLES: readonly [marker: string, tag: string][] = [
  ['\\*', 'strong'],
  ['_', 'em'],
  ['~', 'del'],
];

/** `*bold*`, `_italic_`, `~strike~` on escaped text, the way Slack reads them (word edges, one line). */
function emphasis(html: string): string {
  let out = html;
  for (const [m, tag] of STYLES) {
    const pattern = new RegExp(`(^|${EDGE})${m}(?=\\S)([^${m}\\n]*?\\S)${m}(?=$|${EDGE})`, 'gmu');
    out = out.replace(
      pattern,
      (_whole, before: string, inner: string) => `${before}<${tag}>${inner}</${tag}>`,
    );
  }
  return out;
}

// Stand-ins for finished pieces while the text around them is formatted; removed from the input first.
const HOLE_OPEN = '\uE000';
const HOLE_CLOSE = '\uE001';

/** Slack's mrkdwn as HTML: code, links, mentions, dates, emphasis, quotes, emoji, line breaks. */
export function renderMrkdwn(text: string, names: RenderNames): string {
  const holes: string[] = [];
  const hole = (html: string) => `${HOLE_OPEN}${holes.push(html) - 1}${HOLE_CLOSE}`;
  let work = text.replace(/[\uE000\uE001]/g, '\uFFFD');
  work = work.replace(/```([\s\S]*?)```/g, (_w, code: string) =>
    hole(`<pre class="bk-pre">${escapeHtml(decodeSlack(code.replace(/^\n|\n$/g, '')))}</pre>`),
  );
  work = work.replace(/`([^`\n]+)`/g, (_w, code: string) =>
    hole(`<code>${escapeHtml(decodeSlack(code))}</code>`),
  );
  work = work.replace(/<([^<>\n]*)>/g, (_w, inner: string) => hole(token(inner, names)));
  // A `>` left at the start of a line (written `&gt;` when it is text) opens a quote.
  const lines = work.split('\n').map((line) => {
    const quote = /^>\s?(.*)$/.exec(line);
    const body = withEmoji(escapeHtml(decodeSlack(quote ? (quote[1] ?? '') : line)));
    return quote ? `<span class="bk-quote">${body}</span>` : body;
  });
  const html = emphasis(lines.join('\n')).replace(/\n/g, '<br>');
  const filled = new RegExp(`${HOLE_OPEN}(\\d+)${HOLE_CLOSE}`, 'g');
  return html.replace(filled, (_w, index: string) => holes[Number(index)] ?? '');
}

/** A plain_text object's text: entities decoded, shortcodes as emoji when `emoji` is on, escaped. */
export function renderPlain(text: string, emoji = true): string {
  const escaped = escapeHtml(decodeSlack(text));
  return emoji ? withEmoji(escaped) : escaped;
}

function renderText(value: unknown, names: RenderNames): string {
  if (!isObject(value)) return '';
  return value.type === 'mrkdwn'
    ? renderMrkdwn(str(value.text), names)
    : renderPlain(str(value.text), value.emoji !== false);
}

const unknown = (what: string, type: unknown) =>
  `<div class="bk-unknown">${escapeHtml(what)} <code>${escapeHtml(typeof type === 'string' ? type : String(type ?? 'without a type'))}</code> is not shown by this demo</div>`;

function image(element: Json, cls: string): string {
  const src = safeHref(str(element.image_url));
  const alt = escapeHtml(str(element.alt_text));
  return src ? `<img class="${cls}" src="${escapeHtml(src)}" alt="${alt}" title="${alt}">` : `[${alt}]`;
}

/** A button, with what a click must send back to the bot in data attributes. */
function element(value: unknown, blockId: string, names: RenderNames): string {
  if (!isObject(value)) return unknown('An element', undefined);
  if (value.type === 'image') return image(value, 'bk-accessory-image');
  if (value.type === 'static_select') return selectElement(value);
  if (value.type !== 'button') return unknown('An element of type', value.type);
  const style = value.style === 'primary' || value.style === 'danger' ? ` bk-${value.style}` : '';
  const url = safeHref(str(value.url));
  const data = [
    ['action-id', str(value.action_id)],
    ['block-id', blockId],
    ...(typeof value.value === 'string' ? [['value', value.value]] : []),
    ...(url ? [['url', url]] : []),
  ]
    .map(([key, v]) => ` data-${key}="${escapeHtml(v ?? '')}"`)
    .join('');
  return `<button type="button" class="bk-button${style}"${data}>${renderText(value.text, names)}${url ? ' <span class="bk-external">↗</span>' : ''}</button>`;
}

function block(value: unknown, names: RenderNames): string {
  if (!isObject(value)) return unknown('A block', undefined);
  const blockId = str(value.block_id);
  const data = dataBlock(value);
  if (data !== undefined) return data;
  switch (value.type) {
    case 'header':
      return `<div class="bk-header">${renderText(value.text, names)}</div>`;
    case 'divider':
      return '<hr class="bk-divider">';
    case 'section': {
      const text =
        value.text === undefined ? '' : `<div class="bk-text">${renderText(value.text, names)}</div>`;
      const fields = Array.isArray(value.fields)
        ? `<div class="bk-fields">${value.fields.map((f) => `<div class="bk-field">${renderText(f, names)}</div>`).join('')}</div>`
        : '';
      const accessory =
        value.accessory === undefined
          ? ''
          : `<div class="bk-accessory">${element(value.accessory, blockId, names)}</div>`;
      return `<div class="bk-section"><div class="bk-section-main">${text}${fields}</div>${accessory}</div>`;
    }
    case 'context': {
      const elements = Array.isArray(value.elements) ? value.elements : [];
      const parts = elements.map((e) =>
        isObject(e) && e.type === 'image'
          ? image(e, 'bk-context-image')
          : `<span class="bk-context-text">${renderText(e, names)}</span>`,
      );
      return `<div class="bk-context">${parts.join('')}</div>`;
    }
    case 'actions': {
      const elements = Array.isArray(value.elements) ? value.elements : [];
      return `<div class="bk-actions">${elements.map((e) => element(e, blockId, names)).join('')}</div>`;
    }
    case 'image': {
      const title = isObject(value.title) ? `<figcaption>${renderText(value.title, names)}</figcaption>` : '';
      return `<figure class="bk-image">${title}${image(value, 'bk-image-img')}</figure>`;
    }
    default:
      return unknown('A block of type', value.type);
  }
}

/** A message's or a view's blocks as HTML, in order; anything that is not a list shows as a placeholder. */
export function renderBlocks(blocks: unknown, names: RenderNames): string {
  if (!Array.isArray(blocks)) return unknown('A block list', typeof blocks);
  return `<div class="bk">${blocks.map((b) => block(b, names)).join('')}</div>`;
}

/**
 * The text of a `<!date^…>` token's format in the reader's time zone (`timeZone` and `locale`
 * default to the reader's own), as Slack writes it: `{date_short_pretty} at {time}` → "Today at
 * 3:04 PM". Self-contained: the page's script carries this very function (its source text).
 */
export function slackDateText(
  seconds: number,
  format: string,
  nowMs: number,
  timeZone?: string,
  locale?: string,
): string {
  const zone = timeZone === undefined ? {} : { timeZone };
  const at = (ms: number, options: Intl.DateTimeFormatOptions) =>
    new Intl.DateTimeFormat(locale, { ...zone, ...options }).format(new Date(ms));
  const ms = seconds * 1000;
  const dayOf = (t: number) =>
    new Intl.DateTimeFormat('en-CA', { ...zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
      new Date(t),
    );
  const DAY = 86_400_000;
  const pretty = (otherwise: string) => {
    const day = dayOf(ms);
    if (day === dayOf(nowMs)) return 'Today';
    if (day === dayOf(nowMs - DAY)) return 'Yesterday';
    if (day === dayOf(nowMs + DAY)) return 'Tomorrow';
    return otherwise;
  };
  const ago = () => {
    const minutes = Math.round((nowMs - ms) / 60_000);
    const [n, unit] =
      Math.abs(minutes) < 60
        ? [minutes, 'minute']
        : Math.abs(minutes) < 1440
          ? [Math.round(minutes / 60), 'hour']
          : [Math.round(minutes / 1440), 'day'];
    const count = Math.abs(n);
    const words = `${count} ${unit}${count === 1 ? '' : 's'}`;
    return n >= 0 ? `${words} ago` : `in ${words}`;
  };
  const long = { year: 'numeric', month: 'long', day: 'numeric' } as const;
  const short = { year: 'numeric', month: 'short', day: 'numeric' } as const;
  const full = { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' } as const;
  const tokens: Record<string, () => string> = {
    date_num: () => dayOf(ms),
    date: () => at(ms, long),
    date_short: () => at(ms, short),
    date_long: () => at(ms, full),
    date_pretty: () => pretty(at(ms, long)),
    date_short_pretty: () => pretty(at(ms, short)),
    date_long_pretty: () => pretty(at(ms, full)),
    time: () => at(ms, { hour: 'numeric', minute: '2-digit' }),
    time_secs: () => at(ms, { hour: 'numeric', minute: '2-digit', second: '2-digit' }),
    ago,
  };
  return format.replace(/\{(\w+)\}/g, (whole, name: string) => tokens[name]?.() ?? whole);
}
