import type { SlashCommand } from '@slack/bolt';
import { AccessDeniedError } from '../../access.js';
import { inZone, namesZone, parseDigestTime } from '../../feed/schedule.js';
import type { BalanceEntry } from '../../payments/index.js';
import type { CommandHandler } from '../../pipeline/ack-race.js';
import { type Reply, reply } from '../../pipeline/reply.js';
import { balanceMessage } from '../../views/balance.js';
import type { Message } from '../../views/blocks.js';
import type { KeptReading } from '../../views/charts.js';
import { digestMovedReply } from '../../views/digest-time.js';
import { unknownWordMessage } from '../../views/errors.js';
import { feedReplies, subscriptionListMessage } from '../../views/feed.js';
import { balanceHelp } from '../../views/help.js';
import { commandQuestion, type ListenerDeps } from '../deps.js';
import { nearestWord } from './words.js';

const DAY_MS = 86_400_000;

/** The words `/balance` takes; anything else is the balance itself (nothing) or a typo. */
const BALANCE_WORDS = ['help', 'subscribe', 'unsubscribe', 'subscriptions'] as const;

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

  /**
   * The person's own time zone, as Slack has it, for a digest time typed without one; undefined
   * (UTC) when Slack does not say or cannot be asked just now.
   */
  async function ownZone(userId: string): Promise<string | undefined> {
    try {
      return await deps.access.timeZoneOf(userId);
    } catch (error) {
      deps.logger.warn(
        { err: error },
        'could not read the person’s time zone from Slack: the digest is in UTC',
      );
      return undefined;
    }
  }

  async function subscribe(command: SlashCommand, timeText: string): Promise<Reply> {
    const typed = parseDigestTime(timeText);
    if (!typed) return reply(feedReplies.badTime(timeText), 'ephemeral', 'invalid_input');
    await deps.access.demand(commandQuestion(command, 'start_feed'));
    const digest = namesZone(timeText) ? typed : inZone(typed, await ownZone(command.user_id));
    const move = timeText !== '';
    const result = await deps.feed.subscribe({ ...who(command), digest, move });
    switch (result.kind) {
      case 'subscribed':
        return reply(feedReplies.subscribed(result.digest), 'ephemeral');
      case 'already':
        return reply(
          feedReplies.already(result.digest, result.cadence, result.since),
          'ephemeral',
          'already_subscribed',
        );
      case 'moved':
        return reply(digestMovedReply(result.digest, result.was, result.cadence), 'ephemeral');
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
  // every ack within Slack's 3 seconds. The message is kept for the feed's reading it compares with.
  const messages = new WeakMap<readonly BalanceEntry[], { dayAgo: number | undefined; message: Message }>();
  const messageFor = (entries: readonly BalanceEntry[], dayAgo: KeptReading | undefined): Message => {
    const kept = messages.get(entries);
    if (kept && kept.dayAgo === dayAgo?.id) return kept.message;
    const message = balanceMessage(entries, deps.clock(), dayAgo?.balances);
    messages.set(entries, { dayAgo: dayAgo?.id, message });
    return message;
  };

  /**
   * The feed's reading of a day before, for the change column of a long balance's table; none
   * when the store cannot be read just now: the balance is still shown, without the change.
   */
  async function readingADayAgo(): Promise<KeptReading | undefined> {
    try {
      const [reading] = await deps.feed.readingsAt([deps.clock().getTime() - DAY_MS]);
      return reading;
    } catch (error) {
      deps.logger.warn({ err: error }, 'could not read the balance of a day ago: /balance shows no change');
      return undefined;
    }
  }

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
        if (verb !== '') {
          const suggestion = nearestWord(verb, BALANCE_WORDS);
          const message = unknownWordMessage({
            command: '/balance',
            word: verb,
            suggestion,
            rest: rest.join(' '),
          });
          return reply(message, 'ephemeral', 'usage');
        }
        const [entries, dayAgo] = await Promise.all([deps.payments.getBalance(), readingADayAgo()]);
        return reply(messageFor(entries, dayAgo), 'ephemeral');
      }
    }
  };
}
