import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderBlocks } from '../../src/demo/render.js';
import { type DemoSlack, startDemoSlack } from '../../src/demo/slack.js';
import { coinTrends, pointTimes } from '../../src/views/charts.js';
import { digestMessage } from '../../src/views/feed.js';
import { post } from '../support/demo-slack-api.js';

/** The demo page draws charts (inline SVG) and tables as the bot sends them, loading nothing. */

const NAMES = { users: {}, channels: {} };
const render = (...blocks: unknown[]) => renderBlocks(blocks, NAMES);
const line = {
  type: 'data_visualization',
  title: 'BTC balance, last 7 days',
  chart: {
    type: 'line',
    series: [
      {
        name: 'BTC',
        data: [
          { label: 'Nov 21', value: 0.5 },
          { label: 'Nov 22', value: 1.5 },
        ],
      },
    ],
    axis_config: { categories: ['Nov 21', 'Nov 22'], x_label: 'Day (UTC)', y_label: 'BTC' },
  },
};
const cells = (...texts: string[]) => texts.map((text) => ({ type: 'raw_text', text }));

describe('the demo page’s charts and tables', () => {
  it('draws a line chart as SVG: its title, its key, one point per label, the unit on the y axis', () => {
    const html = render(line);
    expect(html).toContain('<strong>BTC balance, last 7 days</strong>');
    expect(html).toMatch(/<svg role="img" aria-label="BTC balance, last 7 days"/);
    expect(html.match(/<circle /g)).toHaveLength(2);
    expect(html).toContain('<polyline points="70.0,124.0 496.0,12.0"');
    expect(html).toContain('>Nov 21</text>');
    // The last day's label, centred under its point, ends inside the drawing (520 wide).
    expect(html).toContain('<text x="496.0" y="196" text-anchor="middle" font-size="11">Nov 22</text>');
    expect(html).toContain('>BTC</text>');
    expect(html).not.toMatch(/src=|href=|<script/);
  });

  it('scales a line of small values to its highest one, not to 1: 0.0123456 BTC is at the top of the plot', () => {
    const small = {
      ...line,
      chart: {
        ...line.chart,
        series: [
          {
            name: 'BTC',
            data: [
              { label: 'Nov 21', value: 0.0061728 },
              { label: 'Nov 22', value: 0.0123456 },
            ],
          },
        ],
      },
    };
    const html = render(small);
    expect(html).toContain('<polyline points="70.0,96.0 496.0,12.0"');
    expect(html).toContain('>0.0123456</text>');
  });

  it('draws bars, areas and pies, and escapes every label', () => {
    const bar = { ...line, chart: { ...line.chart, type: 'bar' } };
    expect(render(bar).match(/<rect /g)).toHaveLength(2);
    expect(render({ ...line, chart: { ...line.chart, type: 'area' } })).toContain('<polygon ');
    const pie = {
      type: 'data_visualization',
      title: '<b>share</b>',
      chart: {
        type: 'pie',
        segments: [
          { label: '<i>a</i>', value: 1 },
          { label: 'b', value: 3 },
        ],
      },
    };
    const html = render(pie);
    expect(html.match(/<path /g)).toHaveLength(2);
    expect(html).toContain('&lt;i&gt;a&lt;/i&gt; · 1');
    expect(html).not.toContain('<b>');
  });

  it('draws a table with its header and alignment, and a data table with its caption', () => {
    const table = {
      type: 'table',
      column_settings: [{ align: 'left' }, { align: 'right' }],
      rows: [cells('Coin', 'Balance'), cells('BTC', '1,000.5')],
    };
    expect(render(table)).toContain(
      '<thead><tr><th style="text-align:left;padding:2px 10px;border-bottom:1px solid #ddd">Coin</th>',
    );
    expect(render(table)).toContain(
      '<td style="text-align:right;padding:2px 10px;border-bottom:1px solid #ddd">1,000.5</td>',
    );
    const data = {
      type: 'data_table',
      caption: 'Balances',
      rows: [cells('Coin'), [{ type: 'raw_number', value: 5 }]],
    };
    expect(render(data)).toContain('<caption>Balances</caption>');
    expect(render(data)).toContain('>5</td>');
  });
});

describe('the App Home’s coin menu in the demo page', () => {
  it('shows its options with the chosen one selected, escaped', () => {
    const option = (value: string) => ({ text: { type: 'plain_text', text: value }, value });
    const select = {
      type: 'static_select',
      action_id: 'home_trend_coin',
      options: [option('BTC'), option('<b>DOGE</b>')],
      initial_option: option('<b>DOGE</b>'),
    };
    const html = render({ type: 'actions', block_id: 'home_trend', elements: [select] });
    expect(html).toContain('<option value="BTC">BTC</option>');
    expect(html).toContain(
      '<option value="&lt;b&gt;DOGE&lt;/b&gt;" selected>&lt;b&gt;DOGE&lt;/b&gt;</option>',
    );
  });
});

describe('a digest posted to the demo’s Slack', () => {
  let slack: DemoSlack;
  beforeEach(async () => {
    slack = await startDemoSlack({ unfurlHosts: [] });
  });
  afterEach(() => slack.close());

  it('keeps its charts, and the table from its attachments, for the page to draw', async () => {
    const now = Date.parse('2026-11-21T09:00:00Z');
    const coins = (n: number) =>
      Object.fromEntries(
        Array.from({ length: 11 }, (_, i) => [`C${i}`, { title: `Coin ${i}`, balance: `${n + i}` }]),
      );
    const times = pointTimes(now, 7);
    const digest = digestMessage({
      balances: coins(8),
      asOf: new Date(now),
      before: coins(7),
      beforeAt: new Date(now - 86_400_000),
      rises: 11,
      falls: 0,
      trends: coinTrends(
        times,
        times.map((at, k) => ({ id: k, takenAt: at, balances: coins(k + 1) })),
      ),
    });
    const ts = await post(slack, { ...digest });
    const html = renderBlocks(slack.messages.find((m) => m.ts === ts)?.blocks, NAMES);
    expect(html.match(/<svg /g)).toHaveLength(2);
    expect(html).toContain('<table class="bk-table"');
    expect(html).toContain('>C0</td>');
  });
});
