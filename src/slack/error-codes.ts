import type { PostFailure, SlackMethod } from './calls.js';

/**
 * What each error code Slack answers (HTTP 200 with `ok: false`) means to the bot, per Web API
 * method the bot posts, edits, deletes or reads with: copied from the Errors table of each
 * method's page on docs.slack.dev, listed with its source in docs/slack.md#slack-errors.
 *
 * - `transient`, `rate_limited`: Slack failed this time or asks to slow down; the same call may
 *   work later, so the outbox tries again (`rate_limited`: Slack took nothing).
 * - `not_in_channel`, `message_not_found`, `refused`: no retry can change the answer.
 *
 * A code a method's page does not list is taken as `transient`: every page warns that "other
 * errors can be returned in the case where the service is down", and a message retried for a
 * day and then given up (logged with its code) is better than one dropped at once for good.
 */
type Codes = Readonly<Partial<Record<PostFailure, readonly string[]>>>;

/** Listed on every method's page: Slack's own trouble, and refusals of the token, app or call. */
const EVERY_METHOD: Codes = {
  rate_limited: ['ratelimited'],
  transient: [
    'internal_error',
    'fatal_error',
    'service_unavailable',
    'request_timeout',
    'team_added_to_org',
    'org_login_required',
    // A rotating token that expired: the next attempt is made with the installation's token as it
    // is then, refreshed (src/installations/authorization.ts).
    'token_expired',
  ],
  refused: [
    'access_denied',
    'accesslimited',
    'account_inactive',
    'deprecated_endpoint',
    'ekm_access_denied',
    'enterprise_is_restricted',
    'invalid_arg_name',
    'invalid_arguments',
    'invalid_array_arg',
    'invalid_auth',
    'invalid_charset',
    'invalid_form_data',
    'invalid_post_type',
    'method_deprecated',
    'missing_post_type',
    'missing_scope',
    'no_permission',
    'not_allowed_token_type',
    'not_authed',
    'team_access_not_granted',
    'token_revoked',
    'two_factor_setup_required',
  ],
};

/** Codes that refuse a message's content or form (blocks, text, metadata): no retry helps. */
const MESSAGE_REFUSED = [
  'as_user_not_supported',
  'invalid_attachments',
  'invalid_blocks',
  'invalid_blocks_format',
  'invalid_metadata_format',
  'invalid_metadata_schema',
  'markdown_text_conflict',
  'metadata_must_be_sent_from_app',
  'metadata_too_large',
  'msg_too_long',
  'no_text',
  'slack_connect_canvas_sharing_blocked',
  'slack_connect_file_link_sharing_blocked',
  'team_not_found',
  'too_many_attachments',
] as const;

/** Reading a conversation's messages: codes of `conversations.history` and `.replies`. */
const READ_REFUSED = [
  'invalid_cursor',
  'invalid_metadata_filter_keys',
  'invalid_ts_latest',
  'invalid_ts_oldest',
] as const;

const BY_METHOD: Readonly<Partial<Record<SlackMethod, Codes>>> = {
  'chat.postMessage': {
    // Not the 429 `ratelimited`: this method's own "posted too many messages", without Retry-After.
    rate_limited: ['rate_limited'],
    transient: ['message_limit_exceeded'],
    not_in_channel: ['channel_not_found', 'not_in_channel', 'is_archived', 'restricted_action'],
    // Not on the page; should Slack answer it for a reply, the thread's parent is gone.
    message_not_found: ['thread_not_found'],
    refused: [
      ...MESSAGE_REFUSED,
      'attachment_payload_limit_exceeded',
      'cannot_reply_to_message',
      'duplicate_channel_not_found',
      'duplicate_message_not_found',
      'messages_tab_disabled',
      'msg_blocks_too_long',
      'restricted_action_non_threadable_channel',
      'restricted_action_read_only_channel',
      'restricted_action_thread_locked',
      'restricted_action_thread_only_channel',
      'slack_connect_lists_sharing_blocked',
      'too_many_contact_cards',
    ],
  },
  'chat.update': {
    transient: [
      'update_failed',
      'external_channel_migrating',
      'message_limit_exceeded',
      'streaming_state_conflict',
    ],
    not_in_channel: ['channel_not_found', 'is_inactive'],
    message_not_found: ['message_not_found', 'cant_update_message'],
    refused: [
      ...MESSAGE_REFUSED,
      'block_mismatch',
      'cant_broadcast_message',
      'edit_window_closed',
      'no_dual_broadcast_content_update',
    ],
  },
  'chat.delete': {
    not_in_channel: ['channel_not_found'],
    message_not_found: ['message_not_found'],
    refused: ['cant_delete_message', 'compliance_exports_prevent_deletion'],
  },
  'conversations.history': {
    not_in_channel: ['channel_not_found', 'not_in_channel', 'channel_is_limited_access'],
    refused: READ_REFUSED,
  },
  'conversations.replies': {
    // `not_in_channel` is not on the page, but is what Slack answers for a public channel the
    // bot has not joined (docs/slack.md#posting), as conversations.history documents.
    not_in_channel: ['channel_not_found', 'not_in_channel'],
    message_not_found: ['thread_not_found'],
    refused: [...READ_REFUSED, 'method_not_supported_for_channel_type'],
  },
  'conversations.info': {
    not_in_channel: ['channel_not_found', 'channel_is_limited_access'],
  },
};

/** What a code Slack does not list for the method means: worth another try (see above). */
const UNLISTED: PostFailure = 'transient';

const index = (codes: Codes | undefined): ReadonlyMap<string, PostFailure> =>
  new Map(
    Object.entries(codes ?? {}).flatMap(([failure, list]) =>
      (list ?? []).map((code) => [code, failure as PostFailure] as const),
    ),
  );

/** The codes read alike for every method, and each method's own (which win): as documented. */
export const CODE_TABLES = {
  every: index(EVERY_METHOD),
  byMethod: new Map(
    Object.entries(BY_METHOD).map(([method, codes]) => [method as SlackMethod, index(codes)]),
  ),
} as const;

/** What Slack's `code` answered to `method` means to the bot. */
export function failureOfCode(method: SlackMethod, code: string): PostFailure {
  return CODE_TABLES.byMethod.get(method)?.get(code) ?? CODE_TABLES.every.get(code) ?? UNLISTED;
}
