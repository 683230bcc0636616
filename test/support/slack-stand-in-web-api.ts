import { randomUUID } from 'node:crypto';
import { blockKitProblems, modalProblems } from './block-kit.js';
import type { StandInMessage } from './slack-stand-in.js';
import type { StandInState } from './slack-stand-in-state.js';

/**
 * The Slack stand-in's Web API methods (slack-stand-in.ts): what each answers, as docs/slack.md
 * says Slack does, over the stand-in's state. Rate limits, outages and answers a test set are
 * played before these, by the server.
 */

/** One Web API call as a method sees it. */
export interface WebApiCall {
  state: StandInState;
  method: string;
  args: Record<string, unknown>;
  /** The bearer token the call carried, if any. */
  bearer: string | undefined;
}

/** A method: the body it answers with, always with HTTP 200. */
type Method = (call: WebApiCall) => unknown;

/** Slack answers calls about a channel it does not know, or the bot is not in, like this. */
const canPost = (channel: string) => !String(channel).startsWith('CLOSED');

/** Token rotation: a refresh token is good once, for a new token and a new refresh token. */
function refreshToken({ state, args }: WebApiCall): unknown {
  const identity = state.refreshTokens.get(String(args.refresh_token));
  if (!identity) return { ok: false, error: 'invalid_refresh_token' };
  state.refreshTokens.delete(String(args.refresh_token));
  state.rotations += 1;
  const token = `xoxe.xoxb-rotated-${state.rotations}-${randomUUID()}`;
  const refresh = `xoxe-1-refresh-${state.rotations}-${randomUUID()}`;
  state.tokens.set(token, identity);
  state.refreshTokens.set(refresh, identity);
  return { ok: true, token_type: 'bot', access_token: token, refresh_token: refresh, expires_in: 43_200 };
}

function oauthAccess(call: WebApiCall): unknown {
  const { state, args } = call;
  if (args.client_id !== state.options.clientId || args.client_secret !== state.options.clientSecret)
    return { ok: false, error: 'invalid_client_id' };
  if (args.grant_type === 'refresh_token') return refreshToken(call);
  const exchanged = state.oauthCodes.get(String(args.code));
  if (!exchanged) return { ok: false, error: 'invalid_code' };
  state.oauthCodes.delete(String(args.code));
  const team = exchanged.team as { id: string } | null;
  const enterprise = exchanged.enterprise as { id: string } | null;
  const identity = {
    team_id: team?.id ?? enterprise?.id,
    enterprise_id: enterprise?.id,
    is_enterprise_install: exchanged.is_enterprise_install === true,
    user_id: exchanged.bot_user_id,
    bot_id: `B${String(exchanged.bot_user_id).slice(1)}`,
  };
  state.tokens.set(String(exchanged.access_token), identity);
  if (exchanged.refresh_token) state.refreshTokens.set(String(exchanged.refresh_token), identity);
  return { ok: true, token_type: 'bot', app_id: 'A0APP', ...exchanged };
}

async function authTest({ state, bearer }: WebApiCall): Promise<unknown> {
  const { options } = state;
  if (options.authDelayMs) await new Promise((r) => setTimeout(r, options.authDelayMs));
  if (bearer !== undefined && state.tokens.has(bearer))
    return { ok: true, url: 'https://workspace.slack.test/', ...state.tokens.get(bearer) };
  if (bearer !== options.botToken) return { ok: false, error: 'invalid_auth' };
  return {
    ok: true,
    url: 'https://home.slack.test/',
    team: 'Home',
    user: 'payments',
    team_id: options.teamId,
    user_id: 'U0BOT',
    bot_id: 'B0BOT',
    ...options.authTest,
  };
}

function usersInfo({ state, args }: WebApiCall): unknown {
  const user = String(args.user);
  return { ok: true, user: { id: user, team_id: state.options.teamId, ...state.people.get(user) } };
}

function connectionsOpen({ state, bearer }: WebApiCall): unknown {
  if (!state.options.appToken || bearer !== state.options.appToken)
    return { ok: false, error: 'invalid_auth' };
  return { ok: true, url: `${state.base.replace('http', 'ws')}/socket-mode` };
}

function postMessage({ state, args }: WebApiCall): unknown {
  const channel = String(args.channel);
  if (!canPost(channel)) return { ok: false, error: 'not_in_channel' };
  state.check(`chat.postMessage ${channel}`, {
    text: args.text,
    blocks: args.blocks,
    attachments: args.attachments,
  });
  const ts = state.nextTs();
  state.messages.push({
    channel,
    ts,
    threadTs: args.thread_ts === undefined ? undefined : String(args.thread_ts),
    text: String(args.text),
    blocks: (args.blocks ?? []) as unknown[],
    attachments: args.attachments as unknown[] | undefined,
    metadata: args.metadata as StandInMessage['metadata'],
    edits: [],
    deleted: false,
  });
  return { ok: true, channel, ts };
}

function update({ state, args }: WebApiCall): unknown {
  const target = state.messages.find((m) => m.channel === args.channel && m.ts === args.ts && !m.deleted);
  if (!target) return { ok: false, error: 'message_not_found' };
  state.check(`chat.update ${target.channel}`, { text: args.text, blocks: args.blocks });
  target.edits.push({ text: String(args.text), blocks: (args.blocks ?? []) as unknown[] });
  return { ok: true, channel: target.channel, ts: target.ts };
}

function remove({ state, args }: WebApiCall): unknown {
  const target = state.messages.find((m) => m.channel === args.channel && m.ts === args.ts);
  if (target) target.deleted = true;
  return { ok: true };
}

/** conversations.history and conversations.replies. */
function readMessages({ state, method, args }: WebApiCall): unknown {
  // Reading needs membership: a user id is no conversation; a public channel not joined is closed.
  if (String(args.channel).startsWith('U')) return { ok: false, error: 'channel_not_found' };
  if (state.conversations.get(String(args.channel))?.is_member === false)
    return { ok: false, error: 'not_in_channel' };
  const threadTs = method === 'conversations.replies' ? String(args.ts) : undefined;
  const oldest = Number(args.oldest ?? 0);
  const latest = Number(args.latest ?? Number.POSITIVE_INFINITY);
  const found = state.messages.filter(
    (m) =>
      m.channel === args.channel &&
      m.threadTs === threadTs &&
      Number(m.ts) >= oldest &&
      Number(m.ts) <= latest &&
      !m.deleted,
  );
  // History pages from the newest back, replies from the oldest on; `cursor` is where the next page starts.
  if (method === 'conversations.history') found.reverse();
  const start = Number(args.cursor ?? 0);
  const end = start + Number(args.limit ?? found.length);
  return {
    ok: true,
    messages: found.slice(start, end).map((m) => ({ ts: m.ts, text: m.text, metadata: m.metadata })),
    has_more: end < found.length,
    response_metadata: { next_cursor: end < found.length ? String(end) : '' },
  };
}

function conversationsInfo({ state, args }: WebApiCall): unknown {
  const info = state.conversations.get(String(args.channel));
  return info ? { ok: true, channel: info } : { ok: false, error: 'channel_not_found' };
}

function viewsPublish({ state, args }: WebApiCall): unknown {
  const view = args.view as Record<string, unknown>;
  state.problems.push(
    ...blockKitProblems(view, { requireText: false, maxBlocks: 100 }).map((p) => `views.publish: ${p}`),
  );
  if (view?.type !== 'home') state.problems.push('views.publish: not a home view');
  state.homeViews.push({ userId: String(args.user_id), view });
  return { ok: true, view: { id: 'V1', ...view } };
}

function viewsOpen({ state, args, bearer }: WebApiCall): unknown {
  const view = args.view as Record<string, unknown>;
  state.problems.push(...modalProblems(view).map((p) => `views.open: ${p}`));
  state.modals.push({ triggerId: String(args.trigger_id), view, token: bearer });
  return { ok: true, view: { id: `V${state.modals.length}`, ...view } };
}

/** functions.completeSuccess and functions.completeError. */
function functionResult({ state, method, args, bearer }: WebApiCall): unknown {
  state.functionResults.push({
    method,
    executionId: String(args.function_execution_id),
    outputs: args.outputs,
    error: args.error === undefined ? undefined : String(args.error),
    token: bearer,
  });
  return { ok: true };
}

function unfurl({ state, args }: WebApiCall): unknown {
  const unfurls = (args.unfurls ?? {}) as Record<string, unknown>;
  for (const [url, card] of Object.entries(unfurls)) {
    state.problems.push(
      ...blockKitProblems(card, { requireText: false }).map((p) => `chat.unfurl ${url}: ${p}`),
    );
  }
  return { ok: true };
}

const METHODS = new Map<string, Method>([
  ['oauth.v2.access', oauthAccess],
  ['auth.test', authTest],
  ['users.info', usersInfo],
  ['apps.connections.open', connectionsOpen],
  ['chat.postMessage', postMessage],
  ['chat.update', update],
  ['chat.delete', remove],
  ['conversations.replies', readMessages],
  ['conversations.history', readMessages],
  ['conversations.info', conversationsInfo],
  ['views.publish', viewsPublish],
  ['views.open', viewsOpen],
  ['functions.completeSuccess', functionResult],
  ['functions.completeError', functionResult],
  ['chat.unfurl', unfurl],
]);

/** What the Web API answers `call` with (HTTP 200); an unknown method is `unknown_method`. */
export async function webApiAnswer(call: WebApiCall): Promise<unknown> {
  const method = METHODS.get(call.method);
  return method ? method(call) : { ok: false, error: 'unknown_method' };
}
