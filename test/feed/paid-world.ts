import { beforeEach } from 'vitest';
import { DEFAULT_DIGEST } from '../../src/feed/schedule.js';
import { createInvoiceCommand } from '../../src/listeners/commands/invoice.js';
import { commandListener } from '../../src/pipeline/kinds.js';
import { num } from '../../src/sandbox/data.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { commandArgs, HOME_TEAM } from '../support/bolt.js';
import type { PostedMessage } from '../support/fake-slack.js';
import { useWatchWorld } from '../support/watch-world.js';
import { feedInstance } from './feed-instance.js';

/**
 * Issue 40, point 5's world: the one workspace's bot as far as watches, lookups and the feed go,
 * over one sandbox, store and fake Slack: /invoice through the real listener, the watch check and
 * the feed's poll and digest jobs, with their outbox, under one clock the test moves.
 */

export const FINANCE = 'G0FINANCE';
export const OTHER_FEED = 'G0TREASURY';
export const HEADING = 'Invoices watched or looked up here that were paid';

export function usePaidWorld() {
  const world = useWatchWorld();
  beforeEach(() => {
    for (const channel of [FINANCE, OTHER_FEED])
      world.poster.conversations.set(channel, { isPrivate: true, isDirect: false, isShared: false });
  });

  function bot() {
    const watches = world.instance();
    const feed = feedInstance(world.env, 'a', world.poster, world.clock);
    const deps = world.env.deps({ clock: () => world.clock.now });
    return {
      watches,
      feed,
      /** `/invoice <text>` typed in `channel`, through the listener as Bolt calls it; its reply. */
      async invoice(text: string, channel: string) {
        const { args, rec } = commandArgs({ command: '/invoice', text, channel_id: channel });
        await commandListener(deps, '/invoice', createInvoiceCommand(deps))(args);
        const reply = rec.acks[0] ?? rec.responses[0];
        expectValidMessage(reply);
        return reply;
      },
      async subscribe(channel: string) {
        await feed.feed.subscribe({
          teamId: HOME_TEAM,
          channelId: channel,
          userId: 'U0FINANCE',
          digest: DEFAULT_DIGEST,
        });
        await feed.tick();
        // What happens next happens after the feed began.
        world.clock.now += 1000;
      },
      /** Moves the clock on and runs what is due: watch checks first, then the feed's poll and digests. */
      async after(ms: number) {
        world.clock.now += ms;
        await watches.tick();
        await feed.tick();
      },
    };
  }

  /** The feed's posts (not its confirmation, cards or digests) in `channel`, each checked as Block Kit. */
  const postsIn = (channel: string): PostedMessage[] =>
    checked(world.poster.repliesIn(channel).filter((m) => visibleText(m).includes('Payments feed · ')));
  const digestsIn = (channel: string): PostedMessage[] =>
    checked(world.poster.repliesIn(channel).filter((m) => m.text.startsWith('Daily balance digest')));

  /** The balance moves (to `btc` BTC and nothing else), so the next poll posts. */
  const moveBalance = (btc: number) =>
    world.env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num(String(btc)) }]);

  return { ...world, bot, postsIn, digestsIn, moveBalance };
}

function checked(messages: PostedMessage[]): PostedMessage[] {
  for (const m of messages) expectValidMessage(m);
  return messages;
}

/** Whether a message names paid invoices at all. */
export const namesPaid = (m: PostedMessage | undefined) => visibleText(m).includes(HEADING);
