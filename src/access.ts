/**
 * Who may see the balance. Financial data: only members of the workspace the bot is installed in
 * (never a guest organisation in a Slack Connect channel), and, when lists are configured, only
 * the listed people in the listed channels.
 */

export interface BalancePolicy {
  /** The workspace the bot token belongs to (`auth.test`). */
  homeTeamId: string;
  /** When set, only these user ids. */
  allowedUsers?: readonly string[] | undefined;
  /** When set, only in these channel ids. */
  allowedChannels?: readonly string[] | undefined;
}

export interface Requester {
  teamId: string;
  userId: string;
  channelId: string;
}

export type Refusal =
  | 'other_workspace'
  | 'user_not_allowed'
  | 'channel_not_allowed'
  // The payments feed posts for a channel to read, so it asks more of the channel.
  | 'direct_message'
  | 'shared_channel'
  | 'public_channel';

/** Why `who` may not see the balance, or `undefined` when they may. */
export function balanceRefusal(policy: BalancePolicy, who: Requester): Refusal | undefined {
  if (who.teamId !== policy.homeTeamId) return 'other_workspace';
  if (policy.allowedUsers && !policy.allowedUsers.includes(who.userId)) return 'user_not_allowed';
  if (policy.allowedChannels && !policy.allowedChannels.includes(who.channelId)) return 'channel_not_allowed';
  return undefined;
}

/** What the bot knows of a conversation (conversations.info). */
export interface ChannelFacts {
  isPrivate: boolean;
  isDirect: boolean;
  isShared: boolean;
}

/**
 * Why a channel may not receive the payments feed, or `undefined` when it may. Financial data
 * leaves a person's private view there, so: never a DM, never a channel shared with another
 * organisation, and a public channel only when the admin listed it in BALANCE_ALLOWED_CHANNELS.
 */
export function feedChannelRefusal(
  policy: BalancePolicy,
  channelId: string,
  facts: ChannelFacts,
): Refusal | undefined {
  if (facts.isDirect) return 'direct_message';
  if (facts.isShared) return 'shared_channel';
  if (!facts.isPrivate && !policy.allowedChannels?.includes(channelId)) return 'public_channel';
  return undefined;
}

export class AccessDeniedError extends Error {
  override readonly name = 'AccessDeniedError';
  readonly code: Refusal;
  constructor(
    readonly refusal: Refusal,
    /** Where the command may be used, to tell the person. */
    readonly allowedChannels: readonly string[] = [],
  ) {
    super(`balance refused: ${refusal}`);
    this.code = refusal;
  }
}
