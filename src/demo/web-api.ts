import { entitiesOf, entityMethods } from './entities.js';
import { modalMethods } from './modal.js';
import { withAttachmentBlocks } from './render-data.js';
import {
  asPayloadMessage,
  BOT_ID,
  BOT_USER,
  DEMO_CHANNEL,
  DEMO_NAMES,
  DEMO_TEAM,
  DEMO_USER,
  HOME_VIEW_ID,
  isObject,
  type Json,
  str,
  type Workspace,
} from './workspace.js';

/**
 * The Web API methods the bot calls on the demo's Slack (under its `apiUrl`), each answering as
 * Slack does, errors included, from and into the demo's workspace.
 */

export type WebApiMethod = (args: Json) => Json;

/** Arguments the Web API client sends as JSON inside its form fields. */
const JSON_ARGS = new Set(['blocks', 'attachments', 'unfurls', 'view', 'metadata']);

/** A Web API call's arguments, from its JSON or form body. */
export function parseArgs(raw: string, contentType: string | undefined): Json {
  if (contentType?.includes('application/json')) {
    const parsed: unknown = raw ? JSON.parse(raw) : {};
    return isObject(parsed) ? parsed : {};
  }
  const args: Json = {};
  for (const [key, value] of new URLSearchParams(raw))
    args[key] = JSON_ARGS.has(key) ? JSON.parse(value) : value;
  return args;
}

/** The methods by name (`chat.postMessage`). */
export function webApi(workspace: Workspace): Record<string, WebApiMethod> {
  return {
    ...identityMethods(),
    ...chatMethods(workspace),
    ...conversationsMethods(workspace),
    ...entityMethods(workspace),
    ...modalMethods(workspace),
    'views.publish': (args) => {
      const view = args.view;
      if (args.user_id !== DEMO_USER) return { ok: false, error: 'user_not_found' };
      if (!isObject(view) || view.type !== 'home') return { ok: false, error: 'invalid_arguments' };
      workspace.home = Array.isArray(view.blocks) ? view.blocks : [];
      workspace.changed();
      return { ok: true, view: { id: HOME_VIEW_ID, ...view } };
    },
  };
}

function identityMethods(): Record<string, WebApiMethod> {
  return {
    'auth.test': () => ({
      ok: true,
      url: 'http://demo.invalid/',
      team: 'Demo',
      user: 'crypto_payments',
      team_id: DEMO_TEAM,
      user_id: BOT_USER,
      bot_id: BOT_ID,
    }),
    'users.info': (args) => {
      const id = str(args.user) ?? '';
      const name = (DEMO_NAMES.users as Record<string, string>)[id];
      return name === undefined
        ? { ok: false, error: 'user_not_found' }
        : { ok: true, user: { id, team_id: DEMO_TEAM, name, is_bot: id === BOT_USER } };
    },
  };
}

function chatMethods(workspace: Workspace): Record<string, WebApiMethod> {
  return {
    'chat.postMessage': (args) => {
      if (args.channel !== DEMO_CHANNEL) return { ok: false, error: 'channel_not_found' };
      const threadTs = str(args.thread_ts);
      if (threadTs !== undefined && !workspace.find(threadTs))
        return { ok: false, error: 'thread_not_found' };
      const posted = workspace.add({
        user: BOT_USER,
        text: str(args.text) ?? '',
        blocks: withAttachmentBlocks(args),
        threadTs,
        metadata: args.metadata,
      });
      return { ok: true, channel: DEMO_CHANNEL, ts: posted.ts };
    },
    'chat.update': (args) => {
      const target = args.channel === DEMO_CHANNEL ? workspace.find(str(args.ts)) : undefined;
      if (!target) return { ok: false, error: 'message_not_found' };
      if (target.user !== BOT_USER || target.ephemeral) return { ok: false, error: 'cant_update_message' };
      target.text = str(args.text) ?? '';
      target.blocks = withAttachmentBlocks(args);
      if (args.metadata !== undefined) target.metadata = args.metadata;
      target.edited = true;
      workspace.changed();
      return { ok: true, channel: DEMO_CHANNEL, ts: target.ts };
    },
    'chat.delete': (args) => {
      const target = args.channel === DEMO_CHANNEL ? workspace.find(str(args.ts)) : undefined;
      if (!target) return { ok: false, error: 'message_not_found' };
      workspace.messages = workspace.messages.filter((m) => m !== target && m.threadTs !== target.ts);
      workspace.changed();
      return { ok: true, channel: DEMO_CHANNEL, ts: target.ts };
    },
    'chat.unfurl': (args) => {
      const ts = str(args.ts) ?? str(args.unfurl_id)?.split('.').slice(1).join('.');
      const target = workspace.find(ts);
      if (!target) return { ok: false, error: 'cannot_unfurl_message' };
      const unfurls = isObject(args.unfurls) ? args.unfurls : {};
      target.unfurls = Object.entries(unfurls).map(([url, card]) => {
        // A Work Object keyed to the link it unfurls (docs/slack.md#work-objects).
        const entities = entitiesOf(args.metadata).filter((e) => e.app_unfurl_url === url);
        return {
          url,
          blocks: isObject(card) && Array.isArray(card.blocks) ? card.blocks : [],
          ...(entities.length > 0 ? { metadata: { entities } } : {}),
        };
      });
      workspace.changed();
      return { ok: true };
    },
  };
}

function conversationsMethods(workspace: Workspace): Record<string, WebApiMethod> {
  return {
    'conversations.history': (args) => history(workspace, args, undefined),
    'conversations.replies': (args) => history(workspace, args, str(args.ts)),
    'conversations.info': (args) =>
      args.channel === DEMO_CHANNEL
        ? {
            ok: true,
            channel: {
              id: DEMO_CHANNEL,
              name: 'payments',
              is_channel: true,
              is_private: true,
              is_im: false,
              is_mpim: false,
              is_shared: false,
              is_ext_shared: false,
              is_pending_ext_shared: false,
              is_member: true,
            },
          }
        : { ok: false, error: 'channel_not_found' },
  };
}

/** The channel's messages (`threadTs` undefined) or a thread's, between `oldest` and `latest`. */
function history(workspace: Workspace, args: Json, threadTs: string | undefined): Json {
  if (args.channel !== DEMO_CHANNEL) return { ok: false, error: 'channel_not_found' };
  const oldest = Number(args.oldest ?? 0);
  const latest = args.latest === undefined ? Number.POSITIVE_INFINITY : Number(args.latest);
  const found = workspace.messages.filter(
    (m) =>
      !m.ephemeral &&
      Number(m.ts) >= oldest &&
      Number(m.ts) <= latest &&
      (threadTs === undefined ? m.threadTs === undefined : m.ts === threadTs || m.threadTs === threadTs),
  );
  return {
    ok: true,
    messages: found.map((m) => ({ ...asPayloadMessage(m), metadata: m.metadata })),
    has_more: false,
  };
}
