import type { SlashCommand } from '@slack/bolt';
import { AccessDeniedError } from '../../access.js';
import { parseDigestTime } from '../../feed/schedule.js';
import type { BalanceEntry } from '../../payments/index.js';
import type { CommandHandler } from '../../pipeline/ack-race.js';
import { type Reply, reply } from '../../pipeline/reply.js';
import { balanceMessage } from '../../views/balance.js';
import type { Message } from '../../views/blocks.js';
import { feedReplies, subscriptionListMessage } from '../../views/feed.js';
import { balanceHelp } from '../../views/help.js';
import { commandQuestion, type ListenerDeps } from '../deps.js';

/**
 * `/balance`: financial data, so always ephemeral, and only for those the access rules allow.
 * `/balance subscribe [HH:MM [Area/City]]`, `unsubscribe` and `subscriptions` manage the payments
 * feed, whose rules for the channel (private, never shared) the feed service applies where it posts.
 */
export function createBalanceCommand(deps: ListenerDeps): CommandHandler {
  const who = (command: SlashCommand) => ({
    teamId: command.team_id,
    userId: command.user_id,
    channelId: command.channel_id,
  });

  async function subscribe(command: SlashCommand, timeText: string): Promise<Reply> {
    const digest = parseDigestTime(timeText);
    if (!digest) return reply(feedReplies.badTime(timeText), 'ephemeral', 'invalid_input');
    await deps.access.demand(commandQuestion(command, 'start_feed'));
    const result = await deps.feed.subscribe({ ...who(command), digest });
    switch (result.kind) {
      case 'subscribed':
        return reply(feedReplies.subscribed(result.digest), 'ephemeral');
      case 'already':
        return reply(feedReplies.already(result.digest, result.since), 'ephemeral', 'already_subscribed');
      case 'not_in_channel':
        return reply(feedReplies.inviteFirst(command.channel_id), 'ephemeral', 'not_in_channel');
      case 'refused':
        throw new AccessDeniedError(
          result.refusal,
          deps.access.allowedChannels,
          'start_feed',
          deps.access.listable,
        );
    }
  }

  // Concurrent requests share one answer from the service (single flight), and so one message:
  // fifty people asking at once about 20,000 currencies cost one build, not fifty, which keeps
  // every ack within Slack's 3 seconds.
  const messages = new WeakMap<readonly BalanceEntry[], Message>();
  const messageFor = (entries: readonly BalanceEntry[]): Message => {
    let message = messages.get(entries);
    if (!message) {
      message = balanceMessage(entries, deps.clock());
      messages.set(entries, message);
    }
    return message;
  };

  return async (command) => {
    const [verb = '', ...rest] = command.text.trim().split(/\s+/);
    switch (verb.toLowerCase()) {
      case 'help':
        return reply(balanceHelp(), 'ephemeral', 'help');
      case 'subscribe':
        return subscribe(command, rest.join(' '));
      case 'unsubscribe': {
        await deps.access.demand(commandQuestion(command, 'stop_feed'));
        const result = await deps.feed.unsubscribe(who(command));
        return result.kind === 'unsubscribed'
          ? reply(feedReplies.unsubscribed(), 'ephemeral')
          : reply(feedReplies.notSubscribed(), 'ephemeral', 'not_subscribed');
      }
      case 'subscriptions': {
        await deps.access.demand(commandQuestion(command, 'read_feeds'));
        return reply(subscriptionListMessage(await deps.feed.list(command.team_id)), 'ephemeral');
      }
      default: {
        await deps.access.demand(commandQuestion(command, 'read_balance'));
        if (verb !== '') return reply(balanceHelp(), 'ephemeral', 'usage');
        const entries = await deps.payments.getBalance();
        return reply(messageFor(entries), 'ephemeral');
      }
    }
  };
}
