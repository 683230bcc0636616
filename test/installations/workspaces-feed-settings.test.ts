import type { ModalView } from '@slack/types';
import { describe, expect, it } from 'vitest';
import type { InstallationId } from '../../src/store/keys.js';
import { stateOf } from '../support/settings-modal.js';
import type { TeamOf } from '../support/workspace-requests.js';
import { useWorkspacesBot, workspace } from '../support/workspaces-bot.js';

/**
 * Many workspaces: a feed's Settings through the bot's own HTTP endpoint and router. Each
 * workspace's button opens its own feed's modal with its own token; a submission naming
 * another workspace's feed finds none; a save is its installation's.
 */

const many = useWorkspacesBot();
const CHANNEL = 'G0FIN';

const payload = (body: Record<string, unknown>) => `payload=${encodeURIComponent(JSON.stringify(body))}`;
const common = (w: TeamOf, user: string) => ({
  team: { id: w.team, domain: w.team.toLowerCase() },
  user: { id: user, team_id: w.team },
  api_app_id: 'A0APP',
  token: 'deprecated-verification-token',
  enterprise: null,
  is_enterprise_install: false,
});

/** A click on the Settings button of the feed in CHANNEL, in the App Home of `user`. */
const settingsClick = (w: TeamOf, user: string) =>
  payload({
    type: 'block_actions',
    ...common(w, user),
    trigger_id: `1.2.settings-${w.team}`,
    container: { type: 'view', view_id: 'V0HOME' },
    view: { id: 'V0HOME', type: 'home', team_id: w.team },
    actions: [{ type: 'button', action_id: 'feed_settings', block_id: 'b', value: CHANNEL, action_ts: '1' }],
  });

/** Save on the modal `view`, its private_metadata naming `feed`, with `edits` over what it showed. */
const settingsSave = (
  w: TeamOf,
  user: string,
  view: ModalView,
  feed: string,
  edits: Record<string, string>,
) =>
  payload({
    type: 'view_submission',
    ...common(w, user),
    trigger_id: '1.2.save',
    view: {
      ...view,
      id: 'V1',
      team_id: w.team,
      private_metadata: feed,
      hash: 'h',
      state: stateOf(view, edits),
    },
  });

const feedOf = async (team: InstallationId) =>
  (
    await many.bot.store.db
      .selectFrom('feed_subscriptions')
      .select('id')
      .where('installation_id', '=', team)
      .executeTakeFirstOrThrow()
  ).id;

describe('a feed’s Settings with many workspaces', () => {
  it('opens each workspace’s own feed with its own token, and saves only into it', async () => {
    const [one, two] = [workspace('tuneone'), workspace('tunetwo')];
    many.bot.slack.conversations.set(CHANNEL, { id: CHANNEL, is_private: true });
    for (const w of [one, two]) {
      many.bot.slack.people.set(w.installer, { team_id: w.team });
      await many.bot.install(w);
      expect((await many.bot.submitKey(w, w.installer, many.bot.sandbox.apiKey)).body).toBe('');
      await many.bot.command(w, w.installer, 'subscribe', { channel: CHANNEL });
    }
    const [oneFeed, twoFeed] = [await feedOf(one.team), await feedOf(two.team)];

    const before = many.bot.slack.modals.length;
    expect((await many.bot.post(settingsClick(one, one.installer))).status).toBe(200);
    await expect.poll(() => many.bot.slack.modals.length, { timeout: 5000 }).toBe(before + 1);
    const opened = many.bot.slack.modals[before];
    expect(opened?.token).toBe(one.token);
    expect(opened?.view).toMatchObject({ callback_id: 'feed_settings', private_metadata: oneFeed });
    const view = opened?.view as unknown as ModalView;

    // Workspace one's person, naming workspace two's feed: no such feed here, nothing saved.
    const across = await many.bot.post(
      settingsSave(one, one.installer, view, twoFeed, { feed_minimums: 'BTC 1' }),
    );
    expect(across.json()).toMatchObject({ response_action: 'update' });
    expect(JSON.stringify(across.json())).toContain('does not receive the payments feed');
    const own = await many.bot.post(
      settingsSave(one, one.installer, view, oneFeed, { feed_minimums: 'BTC 1' }),
    );
    expect(own.body).toBe('');
    const rows = await many.bot.store.db
      .selectFrom('feed_settings')
      .select(['installation_id', 'subscription_id'])
      .execute();
    expect(rows).toEqual([{ installation_id: one.team, subscription_id: oneFeed }]);
    expect(many.bot.slack.problems).toEqual([]);
  });
});
