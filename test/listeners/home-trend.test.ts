import { beforeEach, describe, expect, it } from 'vitest';
import type { ButtonArgs } from '../../src/listeners/actions/click.js';
import { publishHome } from '../../src/listeners/home.js';
import { ROUTES } from '../../src/listeners/routes.js';
import { Amount } from '../../src/payments/index.js';
import type { CoinTrend } from '../../src/views/charts.js';
import { homeTrendBlocks } from '../../src/views/home-trend.js';
import { expectValidMessage, HOME_VIEW, visibleText } from '../support/block-kit.js';
import { buttonArgs, type DepsOptions } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { NOW, polledAt } from '../support/factories.js';
import { useSandbox } from '../support/use-sandbox.js';

/** The App Home's week of one coin, from the feed's kept readings, as text (no chart in a Home tab). */
const env = useSandbox();
const DAY = 86_400_000;

beforeEach(async () => {
  await emptyWork(env.store);
  await env.store.db.deleteFrom('balance_history').execute();
  await env.store.db.deleteFrom('home_coin_choices').execute();
});

/** `user` picks `coin` in their App Home's menu, through the route the bot registers: the Home it publishes again. */
async function choose(coin: unknown, user = 'U0MEMBER', opts: DepsOptions = {}) {
  const deps = env.deps(opts);
  const { args, rec } = buttonArgs('', { actionId: 'home_trend_coin' });
  const action = {
    type: 'static_select',
    action_id: 'home_trend_coin',
    block_id: 'home_trend',
    selected_option: coin,
  };
  Object.assign(args, { action, payload: action });
  Object.assign(args.body, {
    user: { id: user, team_id: args.body.user.team_id },
    container: { type: 'view' },
  });
  const route = ROUTES.find((r) => r.of === 'installation' && r.name === 'home_trend_coin');
  if (route?.of !== 'installation' || route.kind !== 'action') throw new Error('no route for the coin menu');
  await (route.handler(deps) as (a: ButtonArgs) => Promise<void>)(args as ButtonArgs);
  expect(rec.acks).toHaveLength(1);
  const view = (rec.published.at(-1) as { view?: unknown } | undefined)?.view;
  if (view !== undefined) expectValidMessage(view, HOME_VIEW);
  return view === undefined ? undefined : visibleText(view);
}

/** A reading a day for the last `days` days before NOW: BTC grows by a tenth, DOGE stays. */
async function keepReadings(days: number) {
  for (let d = days; d >= 1; d -= 1) {
    const balances = {
      BTC: { title: 'Bitcoin', balance: `0.${10 - d}` },
      DOGE: { title: 'Dogecoin', balance: '1234567.000000000000000001' },
    };
    await env.store.db
      .insertInto('balance_history')
      .values({ taken_at: NOW.getTime() - d * DAY + 60_000, balances: JSON.stringify(balances) })
      .execute();
  }
  await polledAt(env.store, NOW.getTime() - 30_000);
}

type View = { blocks: { type: string; elements?: Record<string, unknown>[] }[] };
async function home(user = 'U0MEMBER', opts: DepsOptions = {}) {
  const views: View[] = [];
  const deps = env.deps(opts);
  await publishHome(deps, { views: { publish: async (args) => void views.push(args.view as View) } }, user);
  const [view] = views;
  expectValidMessage(view, HOME_VIEW);
  const select = view?.blocks.flatMap((b) => b.elements ?? []).find((e) => e.type === 'static_select');
  return { text: visibleText(view), select, deps };
}

describe('the App Home’s week of one coin', () => {
  it('shows the coin that moved most, day by day, every digit, with a menu of the coins', async () => {
    await keepReadings(7);
    const { text, select } = await home();
    expect(text).toContain('Balance over the week');
    expect(text).toContain(
      ['Nov 15 · 0.3 BTC', 'Nov 16 · 0.4 BTC', 'Nov 17 · 0.5 BTC', 'Nov 18 · 0.6 BTC'].join('\n'),
    );
    expect(text).toContain('Nov 20 · 0.8 BTC\nNov 21 · 0.9 BTC');
    expect(select).toMatchObject({
      action_id: 'home_trend_coin',
      options: [{ value: 'BTC' }, { value: 'DOGE' }],
      initial_option: { value: 'BTC' },
    });
  });

  it('shows the coin a person chose, and again the next time they open it; another person keeps theirs', async () => {
    await keepReadings(7);
    const text = await choose({ text: { type: 'plain_text', text: 'DOGE' }, value: 'DOGE' });
    expect(text).toContain('Nov 15 · 1,234,567.000000000000000001 DOGE');
    expect(text).not.toContain('0.9 BTC');
    const again = await home();
    expect(again.text).toContain('Nov 21 · 1,234,567.000000000000000001 DOGE');
    expect(again.select).toMatchObject({ initial_option: { value: 'DOGE' } });
    expect((await home('U0SOMEONE')).select).toMatchObject({ initial_option: { value: 'BTC' } });
  });

  it('keeps nothing for a choice it did not offer, nor for someone who may not see the balance', async () => {
    await keepReadings(2);
    expect(await choose({ value: 42 })).toBeUndefined();
    await choose({ text: { type: 'plain_text', text: 'DOGE' }, value: 'DOGE' }, 'U0ANYONE', {
      policy: { allowedChannels: ['C0FINANCE'] },
    });
    expect(await env.store.db.selectFrom('home_coin_choices').selectAll().execute()).toEqual([]);
  });

  it('shows a day only when a poll read the balance after it: a feed that stopped shows its week up to then', async () => {
    await keepReadings(7);
    await polledAt(env.store, NOW.getTime() - 2.5 * DAY);
    const { text } = await home();
    expect(text).toContain('Nov 18 · 0.6 BTC');
    expect(text).not.toContain('0.8 BTC');
    expect(text).not.toContain('0.9 BTC');
  });

  it('shows no week from readings no poll has read the balance after', async () => {
    await keepReadings(7);
    await env.store.db.deleteFrom('singletons').execute();
    const { text, select } = await home();
    expect(text).not.toContain('0.9 BTC');
    expect(text).not.toContain('Nov 15 · 0.3 BTC');
    // Not "no readings yet": it keeps some, and no poll runs to confirm them.
    expect(text).toContain('No reading of the balance to show: the payments feed reads it while it runs');
    expect(select).toBeUndefined();
  });

  it('says there is no reading to show, and what starts the feed, when it has none', async () => {
    const { text, select } = await home();
    expect(text).toContain('No reading of the balance to show');
    expect(text).toContain('`/balance subscribe` in a private channel starts one');
    expect(select).toBeUndefined();
  });

  it('is not shown to someone who may not see the balance', async () => {
    await keepReadings(2);
    const { text } = await home('U0ANYONE', { policy: { allowedChannels: ['C0FINANCE'] } });
    expect(text).not.toContain('Balance over the week');
    expect(text).not.toContain('0.9 BTC');
  });
});

describe('the App Home’s coin menu', () => {
  const trend = (id: string, days = 2): CoinTrend => ({
    id,
    points: Array.from({ length: days }, (_, i) => ({
      label: `Nov ${20 + i}`,
      at: i,
      balance: Amount.parse(`${i + 1}`) ?? Amount.ZERO,
    })),
  });
  const menu = (trends: CoinTrend[], chosen?: string) => {
    const blocks = homeTrendBlocks({ trends, chosen });
    expectValidMessage({ type: 'home', blocks }, HOME_VIEW);
    const select = blocks.flatMap((b) => (b.type === 'actions' ? b.elements : []))[0];
    return { blocks, options: select?.type === 'static_select' ? (select.options ?? []) : [] };
  };

  it('offers at most 100 coins, the first ones', () => {
    const trends = Array.from({ length: 101 }, (_, i) => trend(`C${i}`));
    expect(menu(trends).options.map((o) => o.value)).toEqual(trends.slice(0, 100).map((t) => t.id));
  });

  it('offers no coin with no reading, nor one whose id is longer than a menu value may be', () => {
    const longest = 'L'.repeat(150);
    const { options } = menu(
      [trend('EMPTY', 0), trend('X'.repeat(151)), trend(longest), trend('BTC')],
      'EMPTY',
    );
    expect(options.map((o) => o.value)).toEqual([longest, 'BTC']);
    expect(menu([trend('EMPTY', 0)]).blocks.map((b) => b.type)).toEqual(['header', 'section']);
  });

  it('names a coin as written, never turning :shortcodes: into emoji', () => {
    const { options } = menu([trend(':fire:')]);
    expect(options[0]?.text).toEqual({ type: 'plain_text', text: ':fire:', emoji: false });
  });

  it('says under the figures what they are', () => {
    const { blocks } = menu([trend('BTC')]);
    expect(visibleText({ blocks })).toContain(
      'The feed’s reading in force at this time each day (UTC), exact',
    );
  });
});
