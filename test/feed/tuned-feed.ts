import type { ModalView } from '@slack/types';
import { expect } from 'vitest';
import { num } from '../../src/sandbox/data.js';
import { settingsListeners } from '../support/settings-modal.js';
import { clock, env, FINANCE, instance, MINUTE, poster, request } from './feed-service-setup.js';

/**
 * A feed on in the finance channel, tuned with `edits` as someone saves them in its modal (in a
 * file that calls `useFeedService`), and what the channel is told from then on.
 */
export async function tuned(edits: Record<string, string | readonly string[]>) {
  const bot = instance('a', poster, clock);
  await bot.feed.subscribe(request());
  /** Saves `changes` in the feed's Settings modal, through its listeners. */
  const save = async (changes: Record<string, string | readonly string[]>) => {
    const modal = settingsListeners({ ...env.deps({ clock: () => clock.now }), feed: bot.feed });
    const { opened } = await modal.click(FINANCE);
    expect((await modal.save(opened as ModalView, changes)).outcome).toBe('ok');
  };
  await save(edits);
  await bot.tick();
  const seen = poster.repliesIn(FINANCE).length;
  return {
    bot,
    save,
    /** The balances become these, a minute passes, and the bot ticks. */
    async balances(btc: string, usdt = '1.5') {
      env.sandbox.setBalances([
        { id: 'BTC', title: 'Bitcoin', balance: num(btc) },
        { id: 'USDT-TRC20', title: 'Tether <TRC-20>', balance: num(usdt) },
      ]);
      clock.now += MINUTE;
      await bot.tick();
    },
    /** What the channel was told since the settings were saved. */
    posts: () => poster.repliesIn(FINANCE).slice(seen),
  };
}
