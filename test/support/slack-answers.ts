import fc from 'fast-check';
import type { Answer, Meaning, ModelMethod } from './slack-model.js';

/**
 * Slack's answers as this test reads the methods' pages on docs.slack.dev, independently of the
 * bot's table: the codes that mean "try later", for every method and for one method, and a choice
 * of permanent ones, with what they refuse. A code a method's page does not list means "try later"
 * (docs/slack.md#slack-errors). Any code drawn may answer any of the four methods, so each
 * permanent code is listed under every method whose page lists it.
 */
const EVERY: readonly string[] = [
  'ratelimited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'team_added_to_org',
  'org_login_required',
  'token_expired',
];
const TEMPORARY: Record<ModelMethod, readonly string[]> = {
  'chat.postMessage': [...EVERY, 'rate_limited', 'message_limit_exceeded'],
  'chat.update': [
    ...EVERY,
    'update_failed',
    'external_channel_migrating',
    'message_limit_exceeded',
    'streaming_state_conflict',
  ],
  'conversations.history': EVERY,
  'conversations.replies': EVERY,
};
const REFUSED_EVERYWHERE = [
  'invalid_auth',
  'token_revoked',
  'account_inactive',
  'missing_scope',
  'no_permission',
];
const PERMANENT: Record<ModelMethod, Record<string, Exclude<Meaning, 'temporary'>>> = {
  'chat.postMessage': {
    ...Object.fromEntries(REFUSED_EVERYWHERE.map((code) => [code, 'refused' as const])),
    channel_not_found: 'closed',
    not_in_channel: 'closed',
    is_archived: 'closed',
    restricted_action: 'closed',
    thread_not_found: 'gone',
    invalid_blocks: 'refused',
    msg_too_long: 'refused',
    msg_blocks_too_long: 'refused',
    restricted_action_read_only_channel: 'refused',
  },
  'chat.update': {
    ...Object.fromEntries(REFUSED_EVERYWHERE.map((code) => [code, 'refused' as const])),
    channel_not_found: 'closed',
    is_inactive: 'closed',
    message_not_found: 'gone',
    cant_update_message: 'gone',
    edit_window_closed: 'refused',
    invalid_blocks: 'refused',
    msg_too_long: 'refused',
  },
  'conversations.history': {
    ...Object.fromEntries(REFUSED_EVERYWHERE.map((code) => [code, 'refused' as const])),
    channel_not_found: 'closed',
    not_in_channel: 'closed',
    channel_is_limited_access: 'closed',
    invalid_cursor: 'refused',
  },
  'conversations.replies': {
    ...Object.fromEntries(REFUSED_EVERYWHERE.map((code) => [code, 'refused' as const])),
    channel_not_found: 'closed',
    not_in_channel: 'closed',
    thread_not_found: 'gone',
    invalid_cursor: 'refused',
  },
};
export const meaning = (method: ModelMethod, code: string): Meaning => PERMANENT[method][code] ?? 'temporary';
const allCodes = (table: Record<ModelMethod, readonly string[]>) => [...new Set(Object.values(table).flat())];

/** Any of Slack's answers, to whichever of the outbox's calls comes next. */
export const answerArb: fc.Arbitrary<Answer> = fc.oneof(
  fc.record({
    kind: fc.constant('code' as const),
    code: fc.constantFrom(...allCodes(TEMPORARY)),
    taken: fc.constant(false),
  }),
  // "It's possible some aspect of the operation succeeded before the error was raised."
  fc.record({
    kind: fc.constant('code' as const),
    code: fc.constantFrom('internal_error', 'fatal_error'),
    taken: fc.constant(true),
  }),
  fc.record({
    kind: fc.constant('code' as const),
    code: fc.constantFrom(...new Set(Object.values(PERMANENT).flatMap((codes) => Object.keys(codes)))),
    taken: fc.constant(false),
  }),
  fc.record({ kind: fc.constant('http429' as const), retryAfterSeconds: fc.integer({ min: 1, max: 60 }) }),
  fc.record({
    kind: fc.constant('http5xx' as const),
    status: fc.constantFrom(500, 502, 503, 504),
    taken: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('no_answer' as const), taken: fc.boolean() }),
);
