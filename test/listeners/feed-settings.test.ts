import type { ModalView } from '@slack/types';
import { describe, expect, it } from 'vitest';
import {
  clock,
  env,
  FINANCE,
  instance,
  poster,
  request,
  subscription,
  useFeedService,
} from '../feed/feed-service-setup.js';
import { modalProblems, visibleText } from '../support/block-kit.js';
import type { DepsOptions } from '../support/bolt.js';
import { settingsListeners } from '../support/settings-modal.js';

/** A feed's Settings modal through the real listeners: who may open and save it, and what is said. */

useFeedService();

const GUEST = { teamId: 'T0HOME', enterpriseId: undefined, guest: true };

/** A feed on in the finance channel, and the listeners of an instance serving it. */
async function feedOn(opts: DepsOptions = {}) {
  const bot = instance('a', poster, clock);
  await bot.feed.subscribe(request());
  await bot.tick();
  const listeners = settingsListeners({ ...env.deps({ clock: () => clock.now, ...opts }), feed: bot.feed });
  return { bot, ...listeners };
}

/** The Settings button under the feed's confirmation in the channel. */
function confirmationButton() {
  const [confirmation] = poster.repliesIn(FINANCE);
  const buttons = (confirmation?.blocks ?? []).flatMap((b) =>
    'elements' in b && b.type === 'actions' ? (b.elements as { type: string; action_id?: string }[]) : [],
  );
  return buttons.find((e) => e.type === 'button' && e.action_id === 'feed_settings');
}

const said = () => poster.repliesIn(FINANCE).map((m) => m.text);
const settingsRows = () => env.store.db.selectFrom('feed_settings').selectAll().execute();

describe('opening a feed’s Settings', () => {
  it('opens the modal from the confirmation’s button, filled in with the feed as it is', async () => {
    const { click } = await feedOn();
    const button = confirmationButton();
    expect(button).toMatchObject({ text: { text: 'Settings' }, value: FINANCE });
    const { opened, outcome } = await click(FINANCE);
    expect(outcome).toBe('ok');
    expect(modalProblems(opened)).toEqual([]);
    expect(opened).toMatchObject({
      callback_id: 'feed_settings',
      private_metadata: (await subscription()).id,
    });
    const text = visibleText(opened);
    for (const shown of [
      'Coins posted',
      'Bitcoin (BTC)',
      'Minimum per coin',
      'Full: each movement on its own line',
      'Every day',
      'Digest time',
      'Time zone',
    ])
      expect(text).toContain(shown);
    const zone = opened?.blocks.find((b) => b.block_id === 'feed_zone');
    expect(zone).toMatchObject({ element: { initial_value: 'UTC' } });
    expect(opened?.blocks.find((b) => b.block_id === 'feed_digest_time')).toMatchObject({
      element: { initial_time: '09:00' },
    });
  });

  it('tells a guest privately why, in a modal of its own, on the button and on a submission', async () => {
    const { click, save } = await feedOn({ people: { U0GUEST: GUEST } });
    const member = await click(FINANCE);
    const refused = await click(FINANCE, 'U0GUEST');
    expect(refused.outcome).toBe('guest');
    expect(modalProblems(refused.opened)).toEqual([]);
    expect(refused.opened?.callback_id).toBeUndefined();
    expect(visibleText(refused.opened)).toContain('This is only for full members of this workspace');
    // A guest who kept a modal open from before is refused on Save too.
    const saved = await save(member.opened as ModalView, { feed_minimums: 'BTC 0.001' }, 'U0GUEST');
    expect(saved.outcome).toBe('guest');
    expect(saved.ack).toMatchObject({ response_action: 'update' });
    expect(visibleText((saved.ack as { view: unknown }).view)).toContain('This is only for full members');
    expect(await settingsRows()).toEqual([]);
  });

  it('refuses someone outside BALANCE_ALLOWED_USERS', async () => {
    const { click } = await feedOn({ policy: { allowedUsers: ['U0BOSS'] } });
    const { opened, outcome } = await click(FINANCE);
    expect(outcome).toBe('user_not_allowed');
    expect(visibleText(opened)).toContain('You are not allowed to see the balance');
  });

  it('says the feed is off for a channel without one, and that a button it did not write no longer works', async () => {
    const { click } = await feedOn();
    expect((await click('G0ELSEWHERE')).outcome).toBe('not_subscribed');
    const forged = await click('<!channel>');
    expect(forged.outcome).toBe('stale_button');
    expect(visibleText(forged.opened)).toContain('That button no longer works');
  });
});

describe('saving a feed’s Settings', () => {
  it('answers each wrong input under itself, saving nothing and saying nothing', async () => {
    const { click, save, bot } = await feedOn();
    const { opened } = await click(FINANCE);
    const saved = await save(opened as ModalView, {
      feed_minimums: 'BTC 0,001\nETH 1',
      feed_zone: 'Mars/Olympus_Mons',
    });
    expect(saved.outcome).toBe('invalid_input');
    expect(saved.ack).toEqual({
      response_action: 'errors',
      errors: {
        feed_minimums: 'Line 1: 0,001 is not an exact amount, such as 0.001.',
        feed_zone: 'Write an IANA time zone, such as Europe/Berlin or America/New_York.',
      },
    });
    expect((await save(opened as ModalView, { feed_minimums: 'ETH 1' })).ack).toMatchObject({
      errors: { feed_minimums: 'Line 1: ETH is not a coin of this account.' },
    });
    expect((await save(opened as ModalView, { feed_minimums: 'BTC -1' })).ack).toMatchObject({
      errors: { feed_minimums: 'Line 1: a minimum is never below 0.' },
    });
    await bot.tick();
    expect(await settingsRows()).toEqual([]);
    expect(said()).toHaveLength(1);
  });

  it('says what changed in the channel, once, with the amount as typed', async () => {
    const { click, save, bot } = await feedOn();
    const { opened } = await click(FINANCE);
    const edits = { feed_minimums: 'btc 0.00100000', feed_style: 'condensed' };
    expect((await save(opened as ModalView, edits)).ack).toBeUndefined();
    await bot.tick();
    expect(said().slice(1)).toEqual([
      '<@U0ANA> set the minimum for BTC to 0.00100000; made the posts condensed.',
    ]);
    // Slack sends the same submission again (a retry): nothing more is said.
    expect((await save(opened as ModalView, edits)).outcome).toBe('unchanged');
    await bot.tick();
    expect(said()).toHaveLength(2);
    const reopened = await click(FINANCE);
    expect(reopened.opened?.blocks.find((b) => b.block_id === 'feed_minimums')).toMatchObject({
      element: { initial_value: 'BTC 0.00100000' },
    });
  });

  it('says a change once when two instances take the same submission at once', async () => {
    const { click, save, bot } = await feedOn();
    const other = instance('b', poster, clock);
    const second = settingsListeners({ ...env.deps({ clock: () => clock.now }), feed: other.feed });
    const { opened } = await click(FINANCE);
    const edits = {
      feed_digest: 'weekly',
      feed_weekday: '3',
      feed_digest_time: '10:00',
      feed_zone: 'Europe/Berlin',
    };
    const outcomes = await Promise.all([
      save(opened as ModalView, edits),
      second.save(opened as ModalView, edits),
    ]);
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(['ok', 'unchanged']);
    await bot.tick();
    await other.tick();
    expect(said().slice(1)).toEqual(['<@U0ANA> set the digest to every Wednesday at 10:00 Europe/Berlin.']);
    expect((await settingsRows()).map((r) => r.version)).toEqual([1]);
  });
});
