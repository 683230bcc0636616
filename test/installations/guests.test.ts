import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { useWorkspacesBot, workspace } from '../support/workspaces-bot.js';

/**
 * Issue 37 item 9: with many workspaces, a single- or multi-channel guest of the merchant's own
 * workspace got the balance and could start a feed. The bot assembled as src/main.ts does
 * (test/support/workspaces-bot.ts), users.info answered by the Slack stand-in.
 */

const many = useWorkspacesBot();
const REFUSED = 'only for full members of this workspace';

describe('a guest of the merchant’s own workspace, with many workspaces', () => {
  it('sees no amount and changes nothing: /balance, feeds, /invoice, watches and the App Home; a member does', async () => {
    const w = workspace('guests');
    const guests = { U0SINGLEGUEST: { is_ultra_restricted: true }, U0MULTIGUEST: { is_restricted: true } };
    for (const [user, flags] of Object.entries(guests))
      many.bot.slack.people.set(user, { team_id: w.team, ...flags });
    many.bot.slack.people.set('U0MEMBER', { team_id: w.team });
    many.bot.slack.conversations.set('G0FINANCE', { id: 'G0FINANCE', is_private: true });
    await many.bot.install(w);
    expect((await many.bot.submitKey(w, w.installer, many.bot.sandbox.apiKey)).body).toBe('');
    const asked = many.bot.sandbox.requests.length;

    for (const user of Object.keys(guests)) {
      const replies = await Promise.all(
        [
          many.bot.command(w, user, ''),
          many.bot.command(w, user, 'subscribe', { channel: 'G0FINANCE' }),
          many.bot.command(w, user, 'subscriptions'),
          many.bot.command(w, user, DEMO_INVOICE_IDS.open, { command: '/invoice' }),
          many.bot.command(w, user, `watch ${DEMO_INVOICE_IDS.open}`, { command: '/invoice' }),
        ].map(async (asking) => visibleText((await asking).reply)),
      );
      for (const reply of replies) expect(reply).toContain(REFUSED);
      const home = await many.bot.homeFor(w, user);
      expect(home).toContain('not its guests');
      expect(home).not.toContain('Bitcoin');
    }
    // Nothing of the merchant's was read for them, and no feed or watch was started.
    expect(many.bot.sandbox.requests.slice(asked)).toEqual([]);
    const started = await many.bot.store.db.selectFrom('feed_subscriptions').select('channel_id').execute();
    expect(started).toEqual([]);
    expect(await many.bot.store.db.selectFrom('watches').select('id').execute()).toEqual([]);

    expect(visibleText((await many.bot.command(w, 'U0MEMBER', '')).reply)).toContain('Bitcoin');
  });
});
