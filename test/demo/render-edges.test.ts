import { describe, expect, it } from 'vitest';
import { renderBlocks, renderMrkdwn, slackDateText } from '../../src/demo/render.js';

/**
 * The demo page's Block Kit rendering at its edges: malformed blocks and elements, tokens that
 * only look like mentions or dates, quotes, emoji, and the `{ago}` and date tokens of a date.
 */

const NAMES = { users: { U0YOU: 'you' }, channels: { C0PAYMENTS: 'payments' } };
const md = (text: string) => renderMrkdwn(text, NAMES);
const blocks = (...list: unknown[]) => renderBlocks(list, NAMES);
const plain = (text: unknown) => ({ type: 'plain_text', text });
const btn = (action_id: string, extra: Record<string, unknown> = {}) => ({
  type: 'button',
  action_id,
  text: plain(action_id),
  ...extra,
});

describe('malformed blocks and elements, shown as placeholders', () => {
  it('a block that is null or a list is “a block without a type”', () => {
    expect(blocks(null, [])).toBe(
      '<div class="bk">' +
        '<div class="bk-unknown">A block <code>without a type</code> is not shown by this demo</div>'.repeat(
          2,
        ) +
        '</div>',
    );
  });

  it('an element that is null or a list is “an element without a type”', () => {
    expect(blocks({ type: 'actions', block_id: 'a', elements: [null, []] })).toBe(
      '<div class="bk"><div class="bk-actions">' +
        '<div class="bk-unknown">An element <code>without a type</code> is not shown by this demo</div>'.repeat(
          2,
        ) +
        '</div></div>',
    );
  });

  it('a text that is missing, null or not a string shows as nothing', () => {
    expect(
      blocks({ type: 'header', text: null }, { type: 'header' }, { type: 'header', text: plain(42) }),
    ).toBe(
      '<div class="bk"><div class="bk-header"></div><div class="bk-header"></div><div class="bk-header"></div></div>',
    );
  });

  it('actions and context without a list of elements are empty', () => {
    expect(blocks({ type: 'actions' }, { type: 'context', elements: 'x' })).toBe(
      '<div class="bk"><div class="bk-actions"></div><div class="bk-context"></div></div>',
    );
  });
});

describe('blocks, exactly', () => {
  it('a section with fields only, and one with text only', () => {
    expect(blocks({ type: 'section', fields: [plain('f')] }, { type: 'section', text: plain('t') })).toBe(
      '<div class="bk">' +
        '<div class="bk-section"><div class="bk-section-main"><div class="bk-fields"><div class="bk-field">f</div></div></div></div>' +
        '<div class="bk-section"><div class="bk-section-main"><div class="bk-text">t</div></div></div>' +
        '</div>',
    );
  });

  it('an image beside a section', () => {
    const html = blocks({
      type: 'section',
      text: plain('Pay'),
      accessory: { type: 'image', image_url: 'https://x.example/qr.png', alt_text: 'QR' },
    });
    expect(html).toContain(
      '<div class="bk-accessory"><img class="bk-accessory-image" src="https://x.example/qr.png" alt="QR" title="QR"></div>',
    );
  });

  it('buttons side by side: danger styled, an unknown style plain', () => {
    expect(
      blocks({
        type: 'actions',
        block_id: 'b',
        elements: [btn('x', { style: 'danger' }), btn('y', { style: 'huge' })],
      }),
    ).toBe(
      '<div class="bk"><div class="bk-actions">' +
        '<button type="button" class="bk-button bk-danger" data-action-id="x" data-block-id="b">x</button>' +
        '<button type="button" class="bk-button" data-action-id="y" data-block-id="b">y</button>' +
        '</div></div>',
    );
  });

  it('plain text turns shortcodes into emoji when emoji is not set', () => {
    expect(blocks({ type: 'header', text: plain(':tada: done') })).toBe(
      '<div class="bk"><div class="bk-header">🎉 done</div></div>',
    );
  });
});

describe('mrkdwn at its edges', () => {
  it('links http addresses, and keeps a | in a label', () => {
    expect(md('<http://pay.example:8080/pay/1|Pay|now>')).toBe(
      '<a href="http://pay.example:8080/pay/1" target="_blank" rel="noopener noreferrer">Pay|now</a>',
    );
    expect(md('<http://pay.example/>')).toBe(
      '<a href="http://pay.example/" target="_blank" rel="noopener noreferrer">http://pay.example/</a>',
    );
  });

  it('mentions only whole ids: anything more or less is text', () => {
    for (const text of ['<@U0abc>', '<x@U0YOU>', '<#C0pay>', '<x#C0PAYMENTS>', '<!herex>', '<x!here>']) {
      expect(md(text)).toBe(text.replace('<', '&lt;').replace('>', '&gt;'));
    }
    expect(md('<!channel> <!everyone>')).toBe(
      '<span class="bk-mention">@channel</span> <span class="bk-mention">@everyone</span>',
    );
    expect(md('<!subteam^S1>')).toBe('<span class="bk-mention">@group</span>');
  });

  it('shows a date’s fallback unless its seconds are whole digits of a real time', () => {
    for (const seconds of ['-5', '5.5', '5e3', '99999999999999999']) {
      expect(md(`<!date^${seconds}^{date}|fb>`)).toBe('fb');
    }
    expect(md('<!date^1795262400^{date}>')).toBe(
      '<time class="bk-date" data-ts="1795262400" data-format="{date}" datetime="2026-11-21T12:00:00.000Z"></time>',
    );
    expect(md('<!date^1795262400|fb>')).toBe(
      '<time class="bk-date" data-ts="1795262400" data-format="" datetime="2026-11-21T12:00:00.000Z">fb</time>',
    );
  });

  it('quotes a line that starts with >, with or without a space, and nothing else', () => {
    expect(md('>tight\n> spaced\na > b')).toBe(
      '<span class="bk-quote">tight</span><br><span class="bk-quote">spaced</span><br>a &gt; b',
    );
  });

  it('shows every emoji it knows', () => {
    expect(md(':x: :hourglass: :bell: :tada: :lock: :+1:')).toBe('❌ ⌛ 🔔 🎉 🔒 👍');
  });

  it('keeps digits next to code and links', () => {
    expect(md('1`c`2 3<@U0YOU>4')).toBe('1<code>c</code>2 3<span class="bk-mention">@you</span>4');
  });
});

describe('slackDateText', () => {
  const noon = Date.parse('2026-11-21T12:00:00Z') / 1000;
  const text = (format: string, nowIso: string) =>
    slackDateText(noon, format, Date.parse(nowIso), 'UTC', 'en-US');

  it('counts {ago} in minutes below an hour, hours below a day, days from there, one without an s', () => {
    const cases: [string, string][] = [
      ['2026-11-21T12:00:00Z', '0 minutes ago'],
      ['2026-11-21T12:01:00Z', '1 minute ago'],
      ['2026-11-21T12:59:00Z', '59 minutes ago'],
      ['2026-11-21T13:00:00Z', '1 hour ago'],
      ['2026-11-22T11:00:00Z', '23 hours ago'],
      ['2026-11-22T12:00:00Z', '1 day ago'],
      ['2026-11-23T12:00:00Z', '2 days ago'],
      ['2026-11-18T12:00:00Z', 'in 3 days'],
      ['2026-11-21T11:59:00Z', 'in 1 minute'],
    ];
    expect(cases.map(([now]) => text('{ago}', now))).toEqual(cases.map(([, words]) => words));
  });

  it('writes the short, pretty and long pretty dates', () => {
    const far = '2026-12-25T12:00:00Z';
    expect(text('{date_short}|{date_pretty}|{date_long_pretty}', far)).toBe(
      'Nov 21, 2026|November 21, 2026|Saturday, November 21, 2026',
    );
    expect(text('{date_pretty} {date_long_pretty}', '2026-11-21T20:00:00Z')).toBe('Today Today');
  });

  it('reads the day in the reader’s zone', () => {
    const late = noon + 13 * 3600;
    expect(slackDateText(late, '{date_num}', Date.parse('2026-11-21T12:00:00Z'), 'Asia/Tokyo', 'en-US')).toBe(
      '2026-11-22',
    );
    expect(
      slackDateText(late, '{date_num}', Date.parse('2026-11-21T12:00:00Z'), 'America/Los_Angeles', 'en-US'),
    ).toBe('2026-11-21');
  });
});
