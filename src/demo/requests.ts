import { randomUUID } from 'node:crypto';
import { SHORTCUT_CHECK_PAYMENT } from '../domain/actions.js';
import { COMMANDS } from '../domain/commands.js';
import type { BotEndpoint } from './bot-endpoint.js';
import { type ResponseUrls, respond } from './response-urls.js';
import {
  APP_ID,
  asPayloadMessage,
  BOT_USER,
  type ClickPlace,
  DEMO_CHANNEL,
  DEMO_TEAM,
  DEMO_USER,
  type DemoMessage,
  HOME_VIEW_ID,
  isObject,
  type Json,
  str,
  type Workspace,
} from './workspace.js';

/**
 * What you do in the demo's Slack, as the requests Slack sends the bot for it (docs/slack.md):
 * a slash command, a message (its links unfurled with `link_shared`), a click on a button, the
 * message shortcut, and opening the App Home (`app_home_opened`).
 */

/** What a request needs: the workspace it comes from, the bot it goes to, its response_urls. */
export interface RequestContext {
  workspace: Workspace;
  bot: BotEndpoint;
  responseUrls: ResponseUrls;
  /** Hosts whose links the app unfurls (its manifest's `unfurl_domains`). */
  unfurlHosts: readonly string[];
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const payloadForm = (payload: Json) => form({ payload: JSON.stringify(payload) });
const FORM = 'application/x-www-form-urlencoded';
const user = { id: DEMO_USER, username: 'you', name: 'you', team_id: DEMO_TEAM };
const team = { id: DEMO_TEAM, domain: 'demo' };
const channel = { id: DEMO_CHANNEL, name: 'payments' };
const triggerId = () => `${Date.now()}.${randomUUID().slice(0, 8)}`;

/** Text you typed, as Slack stores it: `&`, `<`, `>` escaped, links wrapped in `<…>`. */
function typedText(text: string): { text: string; links: string[] } {
  const links: string[] = [];
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const linked = escaped.replace(/https?:\/\/[^\s<>|]+/g, (found) => {
    // A link typed in a sentence ends before its punctuation: "…/pay/<id>, thanks".
    const url = found.replace(/[.,;:!?)\]]+$/, '');
    links.push(url.replace(/&amp;/g, '&'));
    return `<${url}>${found.slice(url.length)}`;
  });
  return { text: linked, links };
}

/** An event in its `event_callback` envelope, as the Events API sends it. */
export function event(event: Json): string {
  return JSON.stringify({
    token: 'demo-verification-token',
    team_id: DEMO_TEAM,
    api_app_id: APP_ID,
    type: 'event_callback',
    event_id: `Ev${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: DEMO_TEAM, user_id: BOT_USER, is_bot: true, is_enterprise_install: false }],
    event,
  });
}

/** What you type in the message box: a slash command, or a message (its links unfurled). */
export async function say(context: RequestContext, text: string): Promise<void> {
  const trimmed = text.trim();
  if (trimmed === '') return;
  const slash = /^(\/\S+)\s*([\s\S]*)$/.exec(trimmed);
  if (slash) return command(context, (slash[1] ?? '').toLowerCase(), slash[2] ?? '', trimmed);
  return message(context, trimmed);
}

async function command(context: RequestContext, name: string, text: string, typed: string): Promise<void> {
  const { workspace } = context;
  workspace.add({ user: DEMO_USER, text: typedText(typed).text, ephemeral: true, command: true });
  // The commands the app registers (its manifest's); anything else is refused as Slack does.
  if (!(COMMANDS as readonly string[]).includes(name)) {
    workspace.notice(
      `\`${typedText(name).text}\` is not a valid command. In Slack, all messages that start with the "/" character are interpreted as commands.`,
    );
    return;
  }
  const target = { sourceTs: undefined, threadTs: undefined };
  const ack = await context.bot.send(
    form({
      token: 'demo-verification-token',
      team_id: DEMO_TEAM,
      team_domain: 'demo',
      channel_id: DEMO_CHANNEL,
      channel_name: 'payments',
      user_id: DEMO_USER,
      user_name: 'you',
      command: name,
      text,
      api_app_id: APP_ID,
      is_enterprise_install: 'false',
      response_url: context.responseUrls.create(undefined, undefined),
      trigger_id: triggerId(),
    }),
    FORM,
    name,
  );
  // A command's reply may ride in its acknowledgement (docs/slack.md#ack); an empty one carries none.
  if (ack) {
    let body: unknown;
    try {
      body = JSON.parse(ack);
    } catch {
      return void workspace.notice(`${name} failed with the error "invalid_ack"`);
    }
    if (isObject(body) && (body.text !== undefined || body.blocks !== undefined))
      respond(workspace, target, body);
  }
}

async function message(context: RequestContext, text: string): Promise<void> {
  const typed = typedText(text);
  const posted = context.workspace.add({ user: DEMO_USER, text: typed.text });
  const links = typed.links.filter((url) => context.unfurlHosts.includes(new URL(url).host));
  if (links.length === 0) return;
  await context.bot.send(
    event({
      type: 'link_shared',
      channel: DEMO_CHANNEL,
      is_bot_user_member: true,
      user: DEMO_USER,
      message_ts: posted.ts,
      unfurl_id: `${DEMO_CHANNEL}.${posted.ts}`,
      source: 'conversations_history',
      event_ts: posted.ts,
      links: links.map((url) => ({ domain: new URL(url).hostname, url })),
    }),
    'application/json',
    'Unfurling the link',
  );
}

/** The button `actionId` in block `blockId` among `blocks`, as Slack reports a click on it. */
function button(blocks: unknown[], blockId: string, actionId: string): Json | undefined {
  for (const block of blocks) {
    if (!isObject(block) || (str(block.block_id) ?? '') !== blockId) continue;
    const elements = Array.isArray(block.elements) ? block.elements : [block.accessory];
    const found = elements.find((e) => isObject(e) && e.type === 'button' && e.action_id === actionId);
    if (isObject(found)) return found;
  }
  return undefined;
}

/** A click on the button `actionId` of block `blockId` at `place`. */
export async function click(
  context: RequestContext,
  place: ClickPlace,
  blockId: string,
  actionId: string,
): Promise<void> {
  const { workspace } = context;
  const source = place.kind === 'home' ? undefined : workspace.find(place.ts);
  const blocks =
    place.kind === 'home'
      ? (workspace.home ?? [])
      : place.kind === 'unfurl'
        ? (source?.unfurls.flatMap((u) => u.blocks) ?? [])
        : (source?.blocks ?? []);
  const found = button(blocks, blockId, actionId);
  if (!found || (place.kind !== 'home' && !source)) return;
  const action = { ...found, block_id: blockId, action_ts: `${Date.now() / 1000}` };
  const common = {
    type: 'block_actions',
    user,
    api_app_id: APP_ID,
    token: 'demo-verification-token',
    team,
  };
  const payload: Json =
    place.kind === 'home' || !source
      ? {
          ...common,
          // A click in a view carries the view and no response_url (docs/slack.md#app-home).
          container: { type: 'view', view_id: HOME_VIEW_ID },
          trigger_id: triggerId(),
          view: { id: HOME_VIEW_ID, type: 'home', blocks: workspace.home ?? [] },
          actions: [action],
        }
      : {
          ...common,
          container: messageContainer(place.kind, source),
          trigger_id: triggerId(),
          channel,
          ...(source.ephemeral ? {} : { message: asPayloadMessage(source) }),
          response_url: context.responseUrls.create(
            place.kind === 'message' ? source.ts : undefined,
            source.threadTs,
          ),
          actions: [action],
        };
  await context.bot.send(payloadForm(payload), FORM, 'The button', source?.threadTs);
}

/** Where a click in a channel comes from: the message's own blocks, or a card unfurled under it. */
function messageContainer(kind: 'message' | 'unfurl', source: DemoMessage): Json {
  return kind === 'unfurl'
    ? {
        type: 'message_attachment',
        message_ts: source.ts,
        channel_id: DEMO_CHANNEL,
        is_ephemeral: source.ephemeral,
        is_app_unfurl: true,
      }
    : {
        type: 'message',
        message_ts: source.ts,
        channel_id: DEMO_CHANNEL,
        is_ephemeral: source.ephemeral,
      };
}

/** The "Check payment status" message shortcut on the message `ts`. */
export async function shortcut(context: RequestContext, ts: string): Promise<void> {
  const source = context.workspace.find(ts);
  if (!source || source.ephemeral) return;
  await context.bot.send(
    payloadForm({
      type: 'message_action',
      token: 'demo-verification-token',
      action_ts: `${Date.now() / 1000}`,
      team,
      user,
      channel,
      is_enterprise_install: false,
      enterprise: null,
      callback_id: SHORTCUT_CHECK_PAYMENT,
      trigger_id: triggerId(),
      response_url: context.responseUrls.create(undefined, source.threadTs),
      message_ts: source.ts,
      message: asPayloadMessage(source),
    }),
    FORM,
    'Check payment status',
    source.threadTs,
  );
}

/** Opening the app's Home tab. */
export async function openHome(context: RequestContext): Promise<void> {
  await context.bot.send(
    event({
      type: 'app_home_opened',
      user: DEMO_USER,
      channel: 'D0DEMOAPP',
      tab: 'home',
      event_ts: `${Date.now() / 1000}`,
    }),
    'application/json',
    'The App Home',
  );
}
