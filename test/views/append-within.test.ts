import type { KnownBlock } from '@slack/types';
import { describe, expect, it } from 'vitest';
import { appendWithin, LIMITS, type Message, partsWithin } from '../../src/views/blocks.js';
import type { ChartBlock } from '../../src/views/charts.js';
import { md } from '../../src/views/mrkdwn.js';

/** `appendWithin`'s and `partsWithin`'s edges: each of Slack's limits, met exactly and passed by one. */

const base: Message = { text: 'Lead.', blocks: [] };
const x = (n: number) => 'x'.repeat(n);
const header = (n: number): KnownBlock => ({ type: 'header', text: { type: 'plain_text', text: x(n) } });
const section = (n: number): KnownBlock => ({ type: 'section', text: { type: 'mrkdwn', text: x(n) } });
const fields = (count: number, each = 1): KnownBlock => ({
  type: 'section',
  fields: Array.from({ length: count }, () => ({ type: 'mrkdwn' as const, text: x(each) })),
});
const context = (count: number, each = 1): KnownBlock => ({
  type: 'context',
  elements: Array.from({ length: count }, () => ({ type: 'mrkdwn' as const, text: x(each) })),
});
const chart = { type: 'data_visualization' } as unknown as ChartBlock;

/** Whether `blocks` alone are added to an empty message. */
const fits = (...blocks: Message['blocks']) =>
  appendWithin(base, [{ blocks }]).blocks.length === blocks.length;

describe('appendWithin', () => {
  it.each([
    ['a header', header, LIMITS.headerText],
    ['a section’s text', section, LIMITS.sectionText],
    ['a section’s fields', (n: number) => fields(n), LIMITS.fields],
    ['a field’s text', (n: number) => fields(1, n), LIMITS.fieldText],
    ['a context’s elements', (n: number) => context(n), LIMITS.contextElements],
    ['a context element’s text', (n: number) => context(1, n), LIMITS.contextText],
  ])('adds %s at its limit, never one past it', (_what, make, limit) => {
    expect(fits(make(limit))).toBe(true);
    expect(fits(make(limit + 1))).toBe(false);
  });

  it('adds up to 50 blocks and two charts a message, not one more', () => {
    expect(fits(...Array.from({ length: LIMITS.blocks }, () => section(1)))).toBe(true);
    expect(fits(...Array.from({ length: LIMITS.blocks + 1 }, () => section(1)))).toBe(false);
    expect(fits(chart, chart)).toBe(true);
    expect(fits(chart, chart, chart)).toBe(false);
  });

  it('counts the characters of the whole message, its own blocks included', () => {
    const own: Message = { text: 'Lead.', blocks: [section(3000), section(3000), section(3000)] };
    expect(appendWithin(own, [{ blocks: [section(2900)] }]).blocks).toHaveLength(3);
    expect(appendWithin(own, [{ blocks: [section(100)] }]).blocks).toHaveLength(4);
  });

  it('appends words up to the characters given, never one more, and words alone need no room in blocks', () => {
    const full: Message = { text: 'Lead.', blocks: Array.from({ length: LIMITS.blocks }, () => section(1)) };
    expect(appendWithin(full, [{ text: ' more' }], 10).text).toBe('Lead. more');
    expect(appendWithin(full, [{ text: ' more!' }], 10).text).toBe('Lead.');
    expect(appendWithin(base, [{ text: x(LIMITS.topLevelText - 5) }]).text).toHaveLength(LIMITS.topLevelText);
    expect(appendWithin(base, [{ text: x(LIMITS.topLevelText - 4) }]).text).toBe('Lead.');
  });

  it('takes the first try that fits, blocks and words together, and leaves the message as it was when none does', () => {
    const tries = [
      { blocks: [header(LIMITS.headerText + 1)], text: ' whole' },
      { blocks: [header(3)], text: ' short' },
      { text: ' words' },
    ];
    expect(appendWithin(base, tries)).toEqual({ text: 'Lead. short', blocks: [header(3)] });
    expect(appendWithin(base, [{ blocks: [header(3)], text: x(LIMITS.topLevelText) }])).toEqual(base);
    expect(appendWithin(base, [])).toEqual(base);
  });
});

describe('partsWithin', () => {
  const parts = ['aa', 'bb', 'cc'].map((p) => md`${p}`);

  it('joins as many parts as fit exactly, the separators counted, and counts the rest', () => {
    expect(partsWithin(parts, ', ', 10)).toEqual({ shown: md`aa, bb, cc`, omitted: 0 });
    expect(partsWithin(parts, ', ', 9)).toEqual({ shown: md`aa, bb`, omitted: 1 });
    expect(partsWithin(parts, ', ', 6)).toEqual({ shown: md`aa, bb`, omitted: 1 });
    expect(partsWithin(parts, ', ', 5)).toEqual({ shown: md`aa`, omitted: 2 });
    expect(partsWithin(parts, ', ', 1)).toEqual({ shown: md``, omitted: 3 });
  });
});
