import { type AccessPolicy, feedChannelRefusal, type Refusal } from '../access.js';
import { SlackPostError } from '../slack/calls.js';
import type { SlackPoster } from '../slack/poster.js';

/**
 * Whether a channel may receive the payments feed, as `conversations.info` tells it. Only a
 * definite answer ends a feed: the channel is gone, archived or closed to the bot, or it is
 * now shared, public or a DM. Slack not answering, or refusing the bot's token, says nothing
 * about the channel: the feed's message waits instead (`undecided`).
 */

/** Why a channel may not receive the feed; `not_in_channel` when the bot can no longer see it. */
type ChannelProblem = Refusal | 'not_in_channel';

/** The refusals of `conversations.info` that say the bot can no longer see the channel, for good. */
const GONE: ReadonlySet<string | undefined> = new Set(['channel_not_found', 'not_in_channel', 'is_archived']);

/**
 * Refusals that say Slack cannot answer now, not that it refuses the bot: tried again, backing
 * off, like a time-out (an Enterprise Grid migration answers `org_login_required` for a while).
 */
const PASSING: ReadonlySet<string | undefined> = new Set(['org_login_required', 'team_added_to_org']);

/**
 * How long a feed message waits before it is tried again while Slack refuses the bot's token
 * (`token_expired`, `invalid_auth`, `token_revoked`, `missing_scope`, …): until someone fixes
 * the token, the feed is paused, never ended, and its messages go out once it works, each within
 * the life every message has (the outbox's RETRY_FOR_MS; older ones are dropped as `gave_up`).
 * A paused feed message holds back only the feed's later messages: other messages to the channel
 * (a watch's "Paid") go in lanes of their own.
 */
export const TOKEN_PAUSE_MS = 5 * 60_000;

/** Why `channelId` may not receive the feed now, if it may not. Throws when Slack does not say. */
export async function channelProblem(
  poster: Pick<SlackPoster, 'conversation'>,
  policy: Pick<AccessPolicy, 'allowedChannels'>,
  channelId: string,
): Promise<ChannelProblem | undefined> {
  try {
    return feedChannelRefusal(policy, channelId, await poster.conversation(channelId));
  } catch (error) {
    // Closed to the bot by its code, or as Slack's pages class it (channel_is_limited_access).
    if (error instanceof SlackPostError && (error.failure === 'not_in_channel' || GONE.has(error.slackError)))
      return 'not_in_channel';
    throw error;
  }
}

/**
 * What a failed channel check is to the outbox: Slack busy (a 429, a time-out, a 5xx, a
 * migration) is tried again as usual; any other refusal (the token's) pauses the message: it is
 * tried again every TOKEN_PAUSE_MS, as after a 429, until its life ends (RETRY_FOR_MS, as for any
 * message). `paused` is true then.
 */
export function undecided(error: unknown): { error: unknown; paused: boolean } {
  if (!(error instanceof SlackPostError) || error.failure === 'rate_limited' || error.failure === 'transient')
    return { error, paused: false };
  const code = error.slackError;
  if (PASSING.has(code))
    return { error: new SlackPostError('transient', code, undefined, { cause: error }), paused: false };
  return {
    error: new SlackPostError('rate_limited', code, TOKEN_PAUSE_MS, { cause: error }),
    paused: true,
  };
}
