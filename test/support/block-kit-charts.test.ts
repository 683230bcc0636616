import { describe, expect, it } from 'vitest';
import { blockKitProblems } from './block-kit.js';

/** The checker's part for charts and tables rejects what Slack's reference says Slack rejects. */

const chart = (points: number, overrides: Record<string, unknown> = {}) => ({
  type: 'data_visualization',
  title: 'BTC balance, last 7 days',
  chart: {
    type: 'line',
    series: [
      {
        name: 'BTC',
        data: Array.from({ length: points }, (_, i) => ({ label: `Day ${i}`, value: i })),
      },
    ],
    axis_config: { categories: Array.from({ length: points }, (_, i) => `Day ${i}`), y_label: 'BTC' },
  },
  ...overrides,
});
const message = (blocks: unknown[], attachments?: unknown[]) => ({ text: 'Digest', blocks, attachments });
const table = (rows: string[][]) => ({
  blocks: [{ type: 'table', rows: rows.map((r) => r.map((text) => ({ type: 'raw_text', text }))) }],
});

describe('the Block Kit checker, for charts and tables', () => {
  it('takes two charts of up to 20 points and a table in the attachments', () => {
    expect(blockKitProblems(message([chart(20), chart(8)], [table([['Coin', 'Balance']])]))).toEqual([]);
  });

  it('refuses a third chart, 21 points, a title over 50 characters or on two lines, and a label outside the categories', () => {
    expect(blockKitProblems(message([chart(2), chart(2), chart(2)]))).toContain('blocks: 3 charts > 2');
    expect(blockKitProblems(message([chart(21)]))).toContain('blocks[0].chart.series[0]: 1..20 points');
    expect(blockKitProblems(message([chart(2, { title: 'x'.repeat(51) })]))).toContain(
      'blocks[0]: title 1..50 chars',
    );
    expect(blockKitProblems(message([chart(2, { title: 'BTC\nbalance' })]))).toContain(
      'blocks[0]: a control character',
    );
    const stray = chart(2);
    stray.chart.axis_config.categories = ['Day 0', 'Other'];
    expect(blockKitProblems(message([stray]))).toContain('blocks[0].chart.series[0].data[1]: label');
  });

  it('refuses a table in the blocks, two tables, an empty cell, uneven rows and 101 rows', () => {
    expect(blockKitProblems(message([{ type: 'table', rows: [] }]))).toContain(
      'blocks[0]: unknown block type table',
    );
    const one = table([['a']]);
    expect(blockKitProblems(message([chart(2)], [one, one]))).toContain('attachments: more than one table');
    expect(blockKitProblems(message([chart(2)], [table([['a', '']])]))).toContain(
      'attachments.blocks[0].rows[0]: an empty or unknown cell',
    );
    expect(blockKitProblems(message([chart(2)], [table([['a', 'b'], ['c']])]))).toContain(
      'attachments.blocks[0].rows[1]: 1..20 cells, as many as the first row',
    );
    const long = table(Array.from({ length: 101 }, () => ['a']));
    expect(blockKitProblems(message([chart(2)], [long]))).toContain('attachments.blocks[0]: 1..100 rows');
  });
});
