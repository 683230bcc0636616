import { beforeEach, describe, expect, it } from 'vitest';
import { publishHome } from '../../src/listeners/home.js';
import { expectValidMessage, HOME_VIEW, visibleText } from '../support/block-kit.js';
import type { DepsOptions } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { NOW } from '../support/factories.js';
import { useSandbox } from '../support/use-sandbox.js';

/** The App Home's week of one coin, from the feed's kept readings, as text (no chart in a Home tab). */
const env = useSandbox();
const DAY = 86_400_000;

beforeEach(async () => {
  await emptyWork(env.store);
  await env.store.db.deleteFrom('balance_history').execute();
});

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

  it('says the feed keeps no readings yet when it has none', async () => {
    const { text, select } = await home();
    expect(text).toContain('The payments feed keeps no readings yet');
    expect(select).toBeUndefined();
  });

  it('is not shown to someone who may not see the balance', async () => {
    await keepReadings(2);
    const { text } = await home('U0ANYONE', { policy: { allowedChannels: ['C0FINANCE'] } });
    expect(text).not.toContain('Balance over the week');
    expect(text).not.toContain('0.9 BTC');
  });
});
