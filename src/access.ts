/**
 * Who may do what, where: the one decision every surface asks (commands, buttons, the message
 * shortcut, the workflow step, unfurls, the App Home). The README's access table is `RULES` in
 * words.
 *
 * - **Organisation**: financial data and anything that changes what a channel sees are only for
 *   people of the organisation the bot is installed in: its workspace, or every workspace of its
 *   Enterprise Grid organisation (an organisation-wide install, or a workspace inside one). Never
 *   a guest of another organisation in a Slack Connect channel.
 * - **Guests**: a single- or multi-channel guest of the organisation itself (Slack's
 *   `is_ultra_restricted`, `is_restricted`) sees no amount and changes nothing, on any surface:
 *   every action with a person asks Slack's directory, kept an hour per person.
 * - **BALANCE_ALLOWED_USERS** and **BALANCE_ALLOWED_CHANNELS**, when set, narrow the balance
 *   and the payments feed further.
 * - **The feed's channel**: private (or listed), never a DM, never shared with another
 *   organisation (`feedChannelRefusal`, asked with the channel's facts wherever the feed posts).
 */

/** What a person asks to do. */
export type Action =
  /** `/balance`; the App Home's balance. */
  | 'read_balance'
  /** `/balance subscriptions`; the App Home's list of feeds. */
  | 'read_feeds'
  /** `/balance subscribe`. */
  | 'start_feed'
  /** `/balance unsubscribe`. */
  | 'stop_feed'
  /** `/invoice <id>`, `/invoice watching`, the shortcut, an unfurl, the workflow step, Refresh of a private card. */
  | 'read_invoice'
  /** `/invoice watch|unwatch`, **Watch**, **Stop watching**. */
  | 'change_watch'
  /** **Share in thread**, **Refresh** of a card everyone in the channel sees. */
  | 'change_card'
  /** An invoice's side panel (its Work Object's flexpane): where it is watched, in this workspace. */
  | 'read_invoice_panel';

interface Rule {
  /** Only people of the bot's organisation. */
  organisation: boolean;
  /** Only full members: never a guest, even of the organisation itself. */
  members: boolean;
  /** Only the people in BALANCE_ALLOWED_USERS, when it is set. */
  users: boolean;
  /** Only in the channels in BALANCE_ALLOWED_CHANNELS, when it is set (the App Home is none of them). */
  channels: boolean;
}

/**
 * Each action's rules. An invoice id is what the payment page itself is reached by: whoever holds
 * one may read that invoice, so reading asks no organisation; changing what a channel is told
 * does. A guest of the merchant's own workspace reads nothing and changes nothing (issue 37).
 */
export const RULES: Readonly<Record<Action, Rule>> = {
  read_balance: { organisation: true, members: true, users: true, channels: true },
  start_feed: { organisation: true, members: true, users: true, channels: true },
  read_feeds: { organisation: true, members: true, users: true, channels: false },
  stop_feed: { organisation: true, members: true, users: true, channels: false },
  change_watch: { organisation: true, members: true, users: false, channels: false },
  change_card: { organisation: true, members: true, users: false, channels: false },
  read_invoice: { organisation: false, members: true, users: false, channels: false },
  read_invoice_panel: { organisation: true, members: true, users: false, channels: false },
};

/** The workspace and organisation the bot is installed in (`auth.test`, docs/slack.md#install). */
export interface Home {
  teamId: string;
  /** The Enterprise Grid organisation, when there is one. */
  enterpriseId: string | undefined;
}

export interface AccessPolicy {
  home: Home;
  /** When set, only these user ids may see the balance. */
  allowedUsers?: readonly string[] | undefined;
  /** When set, the balance only in these channel ids. */
  allowedChannels?: readonly string[] | undefined;
  /**
   * Whether the operator lists people and channels (BALANCE_ALLOWED_USERS and _CHANNELS): with
   * one workspace (the default); not in many-workspaces mode, where nobody sets them.
   */
  listable?: boolean;
}

/** Who asks: their user id (none for a workflow step) and, when the request says it, their own team. */
export interface Asker {
  userId: string | undefined;
  /** The person's own team (a command's `team_id`, a click's `user.team_id`); not the installation's. */
  teamId?: string | undefined;
}

/** Where: a channel, or none (the App Home, a workflow step). */
export interface Where {
  channelId: string | undefined;
}

export interface Question {
  who: Asker;
  where: Where;
  what: Action;
}

/** A person's own team and organisation, as Slack's directory (`users.info`) knows them. */
export interface Membership {
  teamId: string | undefined;
  enterpriseId: string | undefined;
  /** Their own time zone as set in Slack (`user.tz`, `Europe/Kyiv`), when Slack says. */
  timeZone?: string | undefined;
  /** A single- or multi-channel guest (`is_ultra_restricted`, `is_restricted`). */
  guest?: boolean | undefined;
}

/** Looks a person up; `undefined` when Slack does not know them. */
export type Directory = (userId: string) => Promise<Membership | undefined>;

export type Refusal =
  | 'other_workspace'
  | 'guest'
  | 'user_not_allowed'
  | 'channel_not_allowed'
  // The payments feed posts for a channel to read, so it asks more of the channel.
  | 'direct_message'
  | 'shared_channel'
  | 'public_channel';

/** Whether someone of this team and organisation belongs to the bot's organisation. */
export function sameOrganisation(home: Home, person: Membership): boolean {
  if (person.teamId !== undefined && person.teamId === home.teamId) return true;
  return home.enterpriseId !== undefined && person.enterpriseId === home.enterpriseId;
}

/** What `users.info` says of a person now, as far as managing a payment account goes. */
export interface Standing extends Membership {
  /** An admin or owner of their own workspace. */
  workspaceAdmin: boolean;
  /** An admin or owner of their Enterprise Grid organisation. */
  organisationAdmin: boolean;
  /** A guest, a deactivated account or a bot: never manages money settings. */
  limited: boolean;
}

/** An installation's payment account, as far as who may manage it goes. */
interface ManagedAccount {
  home: Home;
  /** Installed for a whole organisation: its admins are the organisation's, not one workspace's. */
  enterpriseInstall: boolean;
  /** Who connected it, or while none is connected who first installed the app. */
  managerId: string;
}

/**
 * Whether someone may connect, replace or disconnect an installation's payment account: its
 * manager, or an admin or owner of where it is installed (the workspace; for an organisation-wide
 * install, the organisation) as `users.info` says now. A workspace admin of another workspace,
 * or of one workspace of an organisation that installed it for all, is not; nor a guest, a
 * deactivated account or a bot. Whoever ran Add to Slack last is nobody here.
 */
export function mayManageAccount(
  account: ManagedAccount,
  userId: string,
  standing: Standing | undefined,
): boolean {
  if (userId === account.managerId) return true;
  if (!standing || standing.limited) return false;
  const { home } = account;
  if (account.enterpriseInstall)
    return (
      home.enterpriseId !== undefined &&
      standing.enterpriseId === home.enterpriseId &&
      standing.organisationAdmin
    );
  return standing.teamId === home.teamId && standing.workspaceAdmin;
}

/** What the rules need to know of the person who asks. */
export interface AskerStanding {
  /** Of the bot's organisation. */
  ofOrganisation: boolean;
  /** A guest (of any workspace), as Slack's directory says. */
  guest: boolean;
}

/** Why the rules refuse `what`, given who the person is; `undefined` when they allow it. */
export function refusalFor(
  policy: AccessPolicy,
  question: Question,
  person: AskerStanding,
): Refusal | undefined {
  const rule = RULES[question.what];
  if (rule.organisation && !person.ofOrganisation) return 'other_workspace';
  if (rule.members && person.guest) return 'guest';
  const { userId } = question.who;
  if (rule.users && policy.allowedUsers && (userId === undefined || !policy.allowedUsers.includes(userId)))
    return 'user_not_allowed';
  const { channelId } = question.where;
  if (
    rule.channels &&
    policy.allowedChannels &&
    (channelId === undefined || !policy.allowedChannels.includes(channelId))
  )
    return 'channel_not_allowed';
  return undefined;
}

export interface Access {
  /** Why `question` is refused, or `undefined` when it is allowed. */
  refusal(question: Question): Promise<Refusal | undefined>;
  /** Throws an `AccessDeniedError` saying why, when `question` is refused. */
  demand(question: Question): Promise<void>;
  /** `userId` with their own team, from the directory: for requests that do not say it (the App Home). */
  whoIs(userId: string): Promise<Asker & { userId: string }>;
  /** `userId`'s own time zone as Slack's directory knows it (`users.info`), if it says. */
  timeZoneOf(userId: string): Promise<string | undefined>;
  /** Where the balance may be read, to tell people (BALANCE_ALLOWED_CHANNELS; empty when any channel will do). */
  readonly allowedChannels: readonly string[];
  /** Whether the operator lists people and channels here (`AccessPolicy.listable`), to tell people whom to ask. */
  readonly listable: boolean;
}

/**
 * The access rules over a directory of people. A request that names the person's own team and
 * it is the bot's answers at once; anyone else is looked up when the answer depends on it
 * (another workspace of the organisation, or a request that names no team).
 */
export function createAccess(policy: AccessPolicy, directory: Directory): Access {
  const { home } = policy;

  /**
   * Why `question` is refused. Whether the person is a guest is asked of Slack's directory (a
   * request never says it); whether they are of the organisation is answered by the request when
   * it names the bot's own team, or names another while the bot's workspace belongs to no
   * organisation (then the directory is not asked at all when the action needs the organisation).
   * Nobody (a workflow step) is no guest and is of the organisation only by the request's team.
   */
  async function refusal(question: Question): Promise<Refusal | undefined> {
    const { who } = question;
    const fromRequest =
      who.teamId === home.teamId
        ? true
        : who.userId === undefined || (who.teamId !== undefined && home.enterpriseId === undefined)
          ? false
          : undefined;
    if (who.userId === undefined || (fromRequest === false && RULES[question.what].organisation))
      return refusalFor(policy, question, { ofOrganisation: fromRequest === true, guest: false });
    const person = await directory(who.userId);
    const ofOrganisation = fromRequest ?? (person !== undefined && sameOrganisation(home, person));
    return refusalFor(policy, question, { ofOrganisation, guest: person?.guest === true });
  }

  return {
    refusal,
    async demand(question) {
      const refused = await refusal(question);
      if (refused)
        throw new AccessDeniedError(refused, policy.allowedChannels, question.what, policy.listable);
    },
    async whoIs(userId) {
      return { userId, teamId: (await directory(userId))?.teamId };
    },
    async timeZoneOf(userId) {
      return (await directory(userId))?.timeZone;
    },
    allowedChannels: policy.allowedChannels ?? [],
    listable: policy.listable ?? true,
  };
}

/**
 * What the bot knows of a conversation (`conversations.info`, `SlackPoster.conversation`):
 * declared here, by the rule that asks it, as `Membership` is for `users.info`.
 */
export interface ConversationFacts {
  isPrivate: boolean;
  isDirect: boolean;
  /** Shared with another organisation (Slack Connect), or pending to be. */
  isShared: boolean;
}

/**
 * Why a channel may not receive the payments feed, or `undefined` when it may. Financial data
 * leaves a person's private view there, so: never a DM, never a channel shared with another
 * organisation, and a public channel only when the admin listed it in BALANCE_ALLOWED_CHANNELS.
 */
export function feedChannelRefusal(
  policy: Pick<AccessPolicy, 'allowedChannels'>,
  channelId: string,
  facts: ConversationFacts,
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
    /** Where the balance may be read, to tell the person. */
    readonly allowedChannels: readonly string[] = [],
    /** What was asked, so the person is told what they may not do. */
    readonly what: Action = 'read_balance',
    /** Whether the operator lists channels here, so the person may ask for one to be listed. */
    readonly listable = true,
  ) {
    super(`${what} refused: ${refusal}`);
    this.code = refusal;
  }
}
