import type { KnownBlock, PlainTextOption, StaticSelect } from '@slack/types';
import { ACTION_HOME_COIN } from '../domain/actions.js';
import { cut } from '../text.js';
import { context, header, section } from './blocks.js';
import { type CoinTrend, mostMoved } from './charts.js';
import { grouped } from './figures.js';
import { esc, join, md } from './mrkdwn.js';

/**
 * The App Home's week of one coin: the coin chosen in a select menu (remembered per person), its
 * balance at each day's point as text, grouped for reading with every digit kept. Text, not a
 * chart: Slack's reference does not say a `data_visualization` block may go in a Home tab
 * (docs/slack.md#charts-and-tables), and a Home view Slack refuses shows nothing at all.
 */

/** Slack's static select: at most 100 options, each text ≤ 75 and value ≤ 150 characters. */
const MAX_OPTIONS = 100;
const MAX_OPTION_TEXT = 75;
const MAX_VALUE = 150;

export interface HomeTrend {
  /** Each coin's line over the week, from the feed's kept readings. */
  trends: readonly CoinTrend[];
  /** The coin this person chose last, if any. */
  chosen: string | undefined;
}

const option = (id: string): PlainTextOption => ({
  text: { type: 'plain_text', text: cut(id, MAX_OPTION_TEXT), emoji: false },
  value: cut(id, MAX_VALUE),
});

/** The coin shown: the one chosen while the feed still has it, else the one that moved most, else the first. */
function shownTrend(home: HomeTrend, offered: readonly CoinTrend[]): CoinTrend | undefined {
  return offered.find((t) => t.id === home.chosen) ?? mostMoved(offered, 1)[0] ?? offered[0];
}

export function homeTrendBlocks(home: HomeTrend): KnownBlock[] {
  const title = header('Balance over the week');
  const offered = home.trends
    .filter((t) => t.points.length > 0 && t.id.length <= MAX_VALUE)
    .slice(0, MAX_OPTIONS);
  const shown = shownTrend(home, offered);
  if (!shown)
    return [
      title,
      section(
        // No feed, or none polling now (stopped, its account disconnected): true of both.
        md`No reading of the balance to show: the payments feed reads it while it runs (\`/balance subscribe\` in a private channel starts one).`,
      ),
    ];
  const select: StaticSelect = {
    type: 'static_select',
    action_id: ACTION_HOME_COIN,
    placeholder: { type: 'plain_text', text: 'Coin' },
    options: offered.map((t) => option(t.id)),
    initial_option: option(shown.id),
  };
  const lines = shown.points.map((p) => md`${p.label} · ${grouped(p.balance)} ${esc(shown.id, 40)}`);
  return [
    title,
    { type: 'actions', block_id: 'home_trend', elements: [select] },
    section(join(lines, '\n')),
    context(md`The feed’s reading in force at this time each day (UTC), exact`),
  ];
}
