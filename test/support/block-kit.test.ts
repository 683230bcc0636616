import { describe, expect, it } from 'vitest';
import { blockKitProblems } from './block-kit.js';

/** The checker guards every other test: it must catch what Slack would reject. */

const ok = { text: 'hi', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'hi' } }] };
const withBlocks = (...blocks: unknown[]) => ({ text: 'hi', blocks });
const mrkdwn = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });

describe('blockKitProblems', () => {
  it('passes a valid message', () => {
    expect(blockKitProblems(ok)).toEqual([]);
  });

  it.each<[string, unknown, RegExp]>([
    ['no top-level text', { blocks: ok.blocks }, /missing top-level text/],
    ['no blocks', { text: 'x', blocks: [] }, /blocks: none/],
    ['51 blocks', withBlocks(...Array.from({ length: 51 }, () => ({ type: 'divider' }))), /51 > 50/],
    [
      'a long header',
      withBlocks({ type: 'header', text: { type: 'plain_text', text: 'x'.repeat(151) } }),
      /151 chars > 150/,
    ],
    [
      'a mrkdwn header',
      withBlocks({ type: 'header', text: { type: 'mrkdwn', text: 'x' } }),
      /must be plain_text/,
    ],
    ['empty section text', withBlocks(mrkdwn('')), /empty text/],
    ['whitespace section text', withBlocks(mrkdwn('  ')), /empty text/],
    ['3001-char section', withBlocks(mrkdwn('x'.repeat(3001))), /3001 chars > 3000/],
    [
      '11 fields',
      withBlocks({
        type: 'section',
        fields: Array.from({ length: 11 }, () => ({ type: 'mrkdwn', text: 'x' })),
      }),
      /1..10 fields/,
    ],
    [
      'a 2001-char field',
      withBlocks({ type: 'section', fields: [{ type: 'mrkdwn', text: 'x'.repeat(2001) }] }),
      /2001/,
    ],
    [
      '11 context elements',
      withBlocks({ type: 'context', elements: Array(11).fill({ type: 'mrkdwn', text: 'x' }) }),
      /1..10/,
    ],
    [
      'a 76-char button',
      withBlocks({
        type: 'actions',
        elements: [{ type: 'button', action_id: 'a', text: { type: 'plain_text', text: 'x'.repeat(76) } }],
      }),
      /76 chars > 75/,
    ],
    [
      'a javascript: button url',
      withBlocks({
        type: 'actions',
        elements: [
          {
            type: 'button',
            action_id: 'a',
            url: 'javascript:alert(1)',
            text: { type: 'plain_text', text: 'x' },
          },
        ],
      }),
      /bad url/,
    ],
    [
      'duplicate action ids',
      withBlocks({
        type: 'actions',
        elements: [
          { type: 'button', action_id: 'a', text: { type: 'plain_text', text: 'x' } },
          { type: 'button', action_id: 'a', text: { type: 'plain_text', text: 'y' } },
        ],
      }),
      /duplicate action_id/,
    ],
    [
      'duplicate block ids',
      withBlocks({ type: 'divider', block_id: 'b' }, { type: 'divider', block_id: 'b' }),
      /duplicate block_id/,
    ],
    [
      'emoji on mrkdwn',
      withBlocks({ type: 'section', text: { type: 'mrkdwn', text: 'x', emoji: true } }),
      /emoji on mrkdwn/,
    ],
    [
      'over 12,000 characters',
      withBlocks(...Array.from({ length: 5 }, () => mrkdwn('x'.repeat(2500)))),
      /12000/,
    ],
    ['a channel ping', withBlocks(mrkdwn('hello <!channel>')), /unsafe token <!channel>/],
    ['a disguised link', withBlocks(mrkdwn('<javascript:x|Pay here>')), /unsafe token/],
    ['a stray <', withBlocks(mrkdwn('a < b')), /unescaped < or >/],
    ['a raw &', withBlocks(mrkdwn('Tom & Jerry')), /unescaped &/],
    ['a ping in the top-level text', { text: '<!here> hi', blocks: ok.blocks }, /text: unsafe token/],
    ['an unknown block', withBlocks({ type: 'video' }), /unknown block type/],
  ])('rejects %s', (_label, message, problem) => {
    expect(blockKitProblems(message).join('\n')).toMatch(problem);
  });

  it.each([
    '<!date^1700000000^{date_short_pretty} at {time}|2023-11-14T22:13:20Z>',
    '<@U123ABC>',
    '<#C0123ABC>',
    '<https://pay.example.com/pay/x|Open>',
    'Tom &amp; Jerry &lt;3',
  ])('accepts the safe markup %s', (text) => {
    expect(blockKitProblems(withBlocks(mrkdwn(text)))).toEqual([]);
  });
});
