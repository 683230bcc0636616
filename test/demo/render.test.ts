import { describe, expect, it } from 'vitest';
import { escapeHtml, renderBlocks, renderMrkdwn, renderPlain, slackDateText } from '../../src/demo/render.js';
import { balanceMessage } from '../../src/views/balance.js';
import { invoiceMessage } from '../../src/views/invoice.js';
import { balanceEntry, INVOICE_ID, invoice, NOW } from '../support/factories.js';

const NAMES = { users: { U0YOU: 'you' }, channels: { C0PAYMENTS: 'payments' } };
const md = (text: string) => renderMrkdwn(text, NAMES);
const blocks = (...list: unknown[]) => renderBlocks(list, NAMES);

/** What a reader sees: the HTML's text, tags dropped and entities read. */
const seen = (html: string) =>
  html
    .replace(/<br>/g, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** Every `<tag` the HTML opens, by name: what the browser would build. */
const tags = (html: string) => [...html.matchAll(/<([a-z0-9]+)[\s>]/gi)].map((m) => m[1]?.toLowerCase());

const SCRIPT = '<script>alert(1)</script>';
const ALLOWED_TAGS = new Set([
  'div',
  'span',
  'strong',
  'em',
  'del',
  'code',
  'pre',
  'br',
  'a',
  'time',
  'button',
  'hr',
  'img',
  'figure',
  'figcaption',
]);

describe('escaping', () => {
  it('keeps a <script> title as text in a header, escaped by the bot or not', () => {
    for (const text of ['&lt;script&gt;alert(1)&lt;/script&gt;', SCRIPT]) {
      const html = blocks({ type: 'header', text: { type: 'plain_text', text } });
      expect(html).not.toContain('<script');
      expect(seen(html)).toBe(SCRIPT);
    }
  });

  it('keeps markup in mrkdwn as text wherever it appears: text, fields, context, labels, links', () => {
    const hostile = `${SCRIPT} <img src=x onerror=alert(1)> " ' &amp;lt;b&amp;gt;`;
    const html = blocks(
      {
        type: 'section',
        text: { type: 'mrkdwn', text: hostile },
        fields: [{ type: 'mrkdwn', text: hostile }],
      },
      { type: 'context', elements: [{ type: 'mrkdwn', text: hostile }] },
      {
        type: 'actions',
        elements: [
          {
            type: 'button',
            action_id: 'a"><b',
            text: { type: 'plain_text', text: SCRIPT },
            value: '"><script>',
          },
        ],
      },
      {
        type: 'section',
        text: { type: 'mrkdwn', text: `<https://x.example/"onmouseover="alert(1)|label>` },
      },
    );
    expect(tags(html).every((tag) => tag !== undefined && ALLOWED_TAGS.has(tag))).toBe(true);
    // No element but ours, and no attribute that runs code.
    expect(html).not.toMatch(/<script|<img|<b>/);
    expect(html).not.toMatch(/<[^>]*\son[a-z]+=/i);
    expect(seen(html)).toContain(SCRIPT);
    expect(html).toContain('data-value="&quot;&gt;&lt;script&gt;"');
    expect(html).toContain('data-action-id="a&quot;&gt;&lt;b"');
    expect(html).toContain('<a href="https://x.example/&quot;onmouseover=&quot;alert(1)"');
  });

  it('links only http(s) and mailto addresses', () => {
    expect(md('<https://pay.example.com/pay/1?a=1&amp;b=2|Pay>')).toBe(
      '<a href="https://pay.example.com/pay/1?a=1&amp;b=2" target="_blank" rel="noopener noreferrer">Pay</a>',
    );
    expect(md('<mailto:ops@example.com|write>')).toContain('href="mailto:ops@example.com"');
    const script = md('<javascript:alert(1)|click me>');
    expect(script).not.toContain('href');
    expect(seen(script)).toBe('<javascript:alert(1)|click me>');
  });

  it('escapes the five HTML specials', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });

  it('is not fooled by the characters it uses inside to hold finished pieces', () => {
    const html = md('a \uE0000\uE001 *b* `c`');
    expect(html).not.toMatch(/[\uE000\uE001]/);
    expect(html).toBe('a \uFFFD0\uFFFD <strong>b</strong> <code>c</code>');
  });
});

describe('mrkdwn', () => {
  it('reads bold, italic, strike and code the way Slack does', () => {
    expect(md('*Status*\nOpen')).toBe('<strong>Status</strong><br>Open');
    expect(md('_soon_ and ~never~')).toBe('<em>soon</em> and <del>never</del>');
    expect(md('*`/balance`* lists it')).toBe('<strong><code>/balance</code></strong> lists it');
    // Inside code and words, markers are text.
    expect(md('`*not bold*` snake_case_name 2*3*4')).toBe('<code>*not bold*</code> snake_case_name 2*3*4');
    expect(md('* not bold *')).toBe('* not bold *');
    expect(md('```\nline <1>\n  *two*\n```')).toBe('<pre class="bk-pre">line &lt;1&gt;\n  *two*</pre>');
  });

  it('decodes Slack’s entities once, so text the bot escaped reads as written', () => {
    expect(seen(md('Tom &amp; Jerry &lt;3 `a &lt; b`'))).toBe('Tom & Jerry <3 a < b');
    expect(seen(md('&amp;lt;'))).toBe('&lt;');
  });

  it('names mentioned people and channels, and says @here', () => {
    expect(md('<@U0YOU> in <#C0PAYMENTS>')).toBe(
      '<span class="bk-mention">@you</span> in <span class="bk-mention">#payments</span>',
    );
    expect(seen(md('<@U0OTHER> <#C0ELSE|finance> <!here> <!subteam^S1|@ops>'))).toBe(
      '@U0OTHER #finance @here @ops',
    );
  });

  it('marks a date with its time and format, the fallback shown until the page formats it', () => {
    const html = md('read <!date^1795262400^{date_short_pretty} at {time}|2026-11-21T12:00:00Z>');
    expect(html).toBe(
      'read <time class="bk-date" data-ts="1795262400" data-format="{date_short_pretty} at {time}" datetime="2026-11-21T12:00:00.000Z">2026-11-21T12:00:00Z</time>',
    );
    expect(md('<!date^1795262400^{date}^https://x.example/|fallback>')).toMatch(
      /^<a href="https:\/\/x\.example\/"[^>]*><time [^>]*>fallback<\/time><\/a>$/,
    );
    expect(md('<!date^soon^{date}|fallback>')).toBe('fallback');
  });

  it('shows the emoji the bot uses, and leaves unknown shortcodes and times alone', () => {
    expect(md(':warning: :moneybag: :white_check_mark: :eyes:')).toBe('⚠️ 💰 ✅ 👀');
    expect(md(':not_an_emoji: at 12:00:00')).toBe(':not_an_emoji: at 12:00:00');
  });

  it('quotes a line that starts with >, but not one that starts with an escaped &gt;', () => {
    expect(md('> quoted\n&gt; not quoted')).toBe('<span class="bk-quote">quoted</span><br>&gt; not quoted');
  });
});

describe('blocks', () => {
  it('renders a header, a section with text, fields and a button beside, a divider and a context', () => {
    const html = blocks(
      { type: 'header', text: { type: 'plain_text', text: 'Your watches (1)', emoji: true } },
      {
        type: 'section',
        block_id: 'w1',
        text: { type: 'mrkdwn', text: '*Order* in <#C0PAYMENTS>' },
        fields: [
          { type: 'mrkdwn', text: '*Status*\nOpen' },
          { type: 'plain_text', text: 'Plain *field*' },
        ],
        accessory: {
          type: 'button',
          action_id: 'stop_watch:0',
          text: { type: 'plain_text', text: 'Stop' },
          value: 'w-1',
        },
      },
      { type: 'divider' },
      {
        type: 'context',
        elements: [
          { type: 'mrkdwn', text: ':moneybag: feed' },
          { type: 'image', image_url: 'https://x.example/i.png', alt_text: 'logo' },
          { type: 'plain_text', text: 'plain' },
        ],
      },
    );
    expect(html).toContain('<div class="bk-header">Your watches (1)</div>');
    expect(html).toContain(
      '<div class="bk-text"><strong>Order</strong> in <span class="bk-mention">#payments</span></div>',
    );
    expect(html).toContain(
      '<div class="bk-fields"><div class="bk-field"><strong>Status</strong><br>Open</div><div class="bk-field">Plain *field*</div></div>',
    );
    expect(html).toContain(
      '<div class="bk-accessory"><button type="button" class="bk-button" data-action-id="stop_watch:0" data-block-id="w1" data-value="w-1">Stop</button></div>',
    );
    expect(html).toContain('<hr class="bk-divider">');
    expect(html).toContain(
      '<div class="bk-context"><span class="bk-context-text">💰 feed</span><img class="bk-context-image" src="https://x.example/i.png" alt="logo" title="logo"><span class="bk-context-text">plain</span></div>',
    );
  });

  it('renders a row of buttons with what a click sends back: action, block, value, and the URL to open', () => {
    const html = blocks({
      type: 'actions',
      block_id: 'invoice_actions',
      elements: [
        {
          type: 'button',
          action_id: 'open_payment_page',
          text: { type: 'plain_text', text: 'Open payment page' },
          url: 'https://pay.example.com/pay/1',
        },
        {
          type: 'button',
          action_id: 'refresh_invoice',
          text: { type: 'plain_text', text: 'Refresh' },
          value: 'id-1',
          style: 'primary',
        },
        {
          type: 'button',
          action_id: 'evil',
          text: { type: 'plain_text', text: 'Evil' },
          url: 'javascript:alert(1)',
        },
        { type: 'multi_static_select', action_id: 'pick' },
      ],
    });
    expect(html).toContain(
      '<button type="button" class="bk-button" data-action-id="open_payment_page" data-block-id="invoice_actions" data-url="https://pay.example.com/pay/1">Open payment page <span class="bk-external">↗</span></button>',
    );
    expect(html).toContain(
      '<button type="button" class="bk-button bk-primary" data-action-id="refresh_invoice" data-block-id="invoice_actions" data-value="id-1">Refresh</button>',
    );
    expect(html).toContain('data-action-id="evil" data-block-id="invoice_actions">Evil</button>');
    expect(html).toContain('An element of type <code>multi_static_select</code> is not shown by this demo');
  });

  it('renders an image block with its title; an image from nowhere safe is its alt text', () => {
    const html = blocks(
      {
        type: 'image',
        image_url: 'https://x.example/qr.png',
        alt_text: 'QR code',
        title: { type: 'plain_text', text: 'Scan' },
      },
      { type: 'image', image_url: 'javascript:alert(1)', alt_text: 'bad' },
    );
    expect(html).toContain(
      '<figure class="bk-image"><figcaption>Scan</figcaption><img class="bk-image-img" src="https://x.example/qr.png" alt="QR code" title="QR code"></figure>',
    );
    expect(html).toContain('<figure class="bk-image">[bad]</figure>');
  });

  it('shows unknown and malformed blocks as placeholders, in place, never dropping them', () => {
    const html = blocks(
      { type: 'header', text: { type: 'plain_text', text: 'Before' } },
      { type: 'rich_text', elements: [] },
      'not a block',
      { type: '<b>' },
      { type: 'header', text: { type: 'plain_text', text: 'After' } },
    );
    expect(seen(html)).toBe(
      'BeforeA block of type rich_text is not shown by this demoA block without a type is not shown by this demoA block of type <b> is not shown by this demoAfter',
    );
    expect(renderBlocks({ blocks: [] }, NAMES)).toContain('A block list <code>object</code> is not shown');
  });

  it('keeps long texts whole: a 3000-character section and ten 2000-character fields', () => {
    const long = (n: number, word: string) => `${word} `.repeat(n / (word.length + 1)).trim();
    const text = long(3000, 'lorem');
    const field = long(2000, 'ipsum');
    const html = blocks({
      type: 'section',
      text: { type: 'mrkdwn', text },
      fields: Array.from({ length: 10 }, () => ({ type: 'mrkdwn', text: field })),
    });
    expect(seen(html)).toBe(text + field.repeat(10));
  });

  it('turns shortcodes into emoji in plain text unless emoji is off', () => {
    expect(renderPlain(':warning: Busy')).toBe('⚠️ Busy');
    expect(renderPlain(':warning: Busy', false)).toBe(':warning: Busy');
    expect(blocks({ type: 'header', text: { type: 'plain_text', text: ':eyes:', emoji: false } })).toContain(
      '>:eyes:<',
    );
  });
});

describe('what the bot sends, rendered', () => {
  it('an invoice card: header, fields, links, the three buttons and the context line; a hostile title stays text', () => {
    const message = invoiceMessage(invoice({ title: SCRIPT }), { now: NOW });
    const html = renderBlocks(message.blocks, NAMES);
    expect(html).not.toContain('<script');
    expect(seen(html)).toContain(SCRIPT);
    for (const part of ['Status\nOpen', 'Payment\nNot paid', 'Amount\n149.99 USDT', 'after success']) {
      expect(seen(html)).toContain(part);
    }
    for (const action of ['open_payment_page', 'refresh_invoice', 'watch_invoice']) {
      expect(html).toContain(`data-action-id="${action}"`);
    }
    expect(html).toContain(`data-value="${INVOICE_ID}"`);
    expect(html).toMatch(
      /<time class="bk-date" data-ts="\d+" data-format="\{date_short_pretty\} at \{time\}"/,
    );
  });

  it('the balance: every amount digit for digit', () => {
    const entries = [balanceEntry('LTC', '0.0000001', 'Litecoin'), balanceEntry('BIG', '9007199254740993')];
    const text = seen(renderBlocks(balanceMessage(entries, NOW).blocks, NAMES));
    expect(text).toContain('Litecoin\n0.0000001 LTC');
    expect(text).toContain('BIG\n9,007,199,254,740,993 BIG');
  });
});

describe('slackDateText', () => {
  const noon = Date.parse('2026-11-21T12:00:00Z') / 1000;
  const FORMAT = '{date_short_pretty} at {time}';

  it('writes the time in the reader’s zone, with Today, Yesterday and Tomorrow for near days', () => {
    const now = Date.parse('2026-11-21T13:00:00Z');
    expect(slackDateText(noon, FORMAT, now, 'UTC', 'en-US')).toBe('Today at 12:00 PM');
    expect(slackDateText(noon, FORMAT, now, 'Asia/Tokyo', 'en-US')).toBe('Today at 9:00 PM');
    expect(slackDateText(noon, FORMAT, now + 86_400_000, 'UTC', 'en-US')).toBe('Yesterday at 12:00 PM');
    expect(slackDateText(noon, FORMAT, now - 86_400_000, 'UTC', 'en-US')).toBe('Tomorrow at 12:00 PM');
    expect(slackDateText(noon, FORMAT, now + 5 * 86_400_000, 'UTC', 'en-US')).toBe(
      'Nov 21, 2026 at 12:00 PM',
    );
    // 03:00 in Tokyo is the next day there: the day is the reader's, not UTC's.
    expect(slackDateText(noon + 15 * 3600, '{date_num} {time}', now, 'Asia/Tokyo', 'en-GB')).toBe(
      '2026-11-22 12:00',
    );
  });

  it('knows Slack’s other tokens and leaves unknown ones as written', () => {
    const now = Date.parse('2026-11-21T12:03:00Z');
    expect(
      slackDateText(noon, '{date} · {date_long} · {time_secs} · {ago} · {nope}', now, 'UTC', 'en-US'),
    ).toBe('November 21, 2026 · Saturday, November 21, 2026 · 12:00:00 PM · 3 minutes ago · {nope}');
    expect(slackDateText(noon, '{ago}', now - 2 * 3_600_000, 'UTC', 'en-US')).toBe('in 2 hours');
  });
});
