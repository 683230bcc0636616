/**
 * What the app manifest says besides its shape (scripts/manifest.ts): the scopes each Web API
 * method and event needs, why each scope is asked for, the slash commands' texts and the
 * Workflow Builder step's definition.
 */
import type { Command } from '../src/domain/commands.js';
import type { BOT_SCOPES } from '../src/installations/oauth.js';

export type BotScope = (typeof BOT_SCOPES)[number];

/**
 * The bot scopes each Web API method the bot calls needs (each method's page on docs.slack.dev,
 * "Required scopes", in the kinds of conversation the bot uses it in). test/manifest.test.ts finds
 * every method src/ calls and fails on one missing here; BOT_SCOPES must be exactly what the
 * methods called, the events subscribed and the slash commands need.
 */
export const METHOD_SCOPES: Readonly<Record<string, readonly BotScope[]>> = {
  'auth.test': [],
  // chat:write.public: posting in a public channel the bot has not joined (docs/slack.md#posting).
  'chat.postMessage': ['chat:write', 'chat:write.public'],
  'chat.update': ['chat:write'],
  'chat.delete': ['chat:write'],
  'chat.unfurl': ['links:write'],
  // An invoice's Work Object side panel (docs/slack.md#work-objects): no scope.
  'entity.presentDetails': [],
  // Public and private channels, DMs and group DMs: a feed or a watch may be in any of them.
  'conversations.info': ['channels:read', 'groups:read', 'im:read', 'mpim:read'],
  'conversations.history': ['channels:history', 'groups:history', 'im:history', 'mpim:history'],
  'conversations.replies': ['channels:history', 'groups:history', 'im:history', 'mpim:history'],
  'users.info': ['users:read'],
  'views.open': [],
  'views.publish': [],
  // A custom step's complete() and fail(), with the step's own token.
  'functions.completeSuccess': [],
  'functions.completeError': [],
};

/** The bot scopes each subscribed event needs. */
export const EVENT_SCOPES: Readonly<Record<string, readonly BotScope[]>> = {
  link_shared: ['links:read'],
  entity_details_requested: [],
  app_home_opened: [],
  function_executed: [],
  app_uninstalled: [],
  tokens_revoked: [],
};

/** Slash commands need this scope. */
export const COMMAND_SCOPE: BotScope = 'commands';

/** Why the bot asks for each scope, written before the first scope of each group. */
export const SCOPE_NOTES: Partial<Record<BotScope, string>> = {
  commands: 'The slash commands.',
  'links:read': 'Previews of payment links: the link_shared event, answered with chat.unfurl.',
  'chat:write':
    "Watches and feeds: the bot's own messages (chat.postMessage, chat.update, chat.delete), also\nin a public channel it has not joined.",
  'channels:history':
    "Finding a message a crashed instance may already have posted (conversations.history and\n.replies, by its metadata), so nothing is posted twice, in every kind of conversation the bot\nposts in: read only to look for the bot's own messages.",
  'channels:read':
    'The payments feed: whether a conversation is private, a DM, or shared with another\norganisation (conversations.info), before subscribing and before each post.',
  'users:read':
    "Who may see the balance: a person's own workspace and organisation (users.info), which the\nApp Home's event does not say.",
};

export const COMMAND_TEXT: Record<Command, { description: string; usage_hint: string }> = {
  '/balance': {
    description:
      'Your balance per cryptocurrency (only you see it), or a payments feed for a private channel',
    usage_hint: '[subscribe [HH:MM [Area/City]] | unsubscribe | subscriptions | help]',
  },
  '/invoice': {
    description: "An invoice's status and payment link; watch it to hear when it is paid",
    usage_hint: '[watch|unwatch] <invoice id or payment link> | watching | help',
  },
};

/**
 * The step's definition, in the form a v1 manifest takes for a Bolt app (docs/slack.md#manifest):
 * each parameter is a key of `input_parameters` / `output_parameters`, and an input the step
 * cannot run without says `is_required: true` (v2's `{properties, required}` wrapper is refused
 * under `major_version: 1`). Its input is what the listener reads, its outputs what it completes
 * with (test/manifest-workflow.test.ts runs the listener to check both).
 */
export const GET_INVOICE_STEP = {
  title: 'Get invoice',
  description: 'Reads an invoice of the crypto payment service by its id or payment link',
  input_parameters: {
    invoice: {
      type: 'string',
      title: 'Invoice',
      description: 'The invoice id or its payment link',
      is_required: true,
      hint: 'Paste the invoice id, or the payment link the customer got',
    },
  },
  output_parameters: {
    status: {
      type: 'string',
      title: 'Status',
      description: "The invoice's status, as the service names it (open, …)",
    },
    pay_status: {
      type: 'string',
      title: 'Payment status',
      description: 'The payment status, as the service names it (none, paid, …)',
    },
    amount: {
      type: 'string',
      title: 'Amount',
      description: 'The amount, every digit as the service sent it',
    },
    currency: { type: 'string', title: 'Currency', description: 'The currency code of the amount' },
    title: { type: 'string', title: 'Title', description: "The invoice's title" },
    link: { type: 'string', title: 'Payment link', description: 'The link the customer pays through' },
    expires_at: {
      type: 'slack#/types/timestamp',
      title: 'Expires at',
      description: 'When the invoice expires',
    },
    shop: { type: 'string', title: 'Shop', description: 'The project (shop) the invoice belongs to' },
  },
};
