import { createHmac } from 'node:crypto';

/**
 * Requests as Slack sends them (docs/slack.md): form-encoded slash commands with every
 * documented field, `block_actions` payloads, `link_shared` event callbacks, each signed
 * `v0=hex(HMAC-SHA256(secret, "v0:" + ts + ":" + body))`.
 */

export interface SignOptions {
  /** Seconds since the epoch; default now. */
  timestamp?: number;
  /** Override the signature; `null` sends none. */
  signature?: string | null;
}

export function signatureHeaders(
  secret: string,
  body: string,
  opts: SignOptions = {},
): Record<string, string> {
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
  const signature =
    opts.signature === undefined
      ? `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`
      : opts.signature;
  return {
    'x-slack-request-timestamp': String(timestamp),
    ...(signature === null ? {} : { 'x-slack-signature': signature }),
  };
}

export interface CommandFields {
  command: '/balance' | '/invoice';
  text: string;
  response_url: string;
  team_id?: string;
  user_id?: string;
  channel_id?: string;
  /** An organisation's id, and `'true'` when the app is installed for the whole organisation. */
  enterprise_id?: string;
  is_enterprise_install?: 'true' | 'false';
}

export function commandBody(fields: CommandFields): string {
  return new URLSearchParams({
    token: 'deprecated-verification-token',
    team_id: 'T0HOME',
    team_domain: 'home',
    enterprise_id: 'E0ORG',
    enterprise_name: 'Org',
    channel_id: 'C0SUPPORT',
    channel_name: 'support',
    user_id: 'U0ASKER',
    user_name: 'asker',
    api_app_id: 'A0APP',
    is_enterprise_install: 'false',
    trigger_id: '13345224609.738474920.8088930838d88f008e0',
    ...fields,
  }).toString();
}

export function blockActionsBody(opts: {
  actionId: string;
  /** Any JSON: Slack delivers whatever the button carried, or a forger sent. */
  value?: unknown;
  url?: string;
  responseUrl: string;
  user?: string;
  /** The clicker's own team. */
  userTeam?: string;
  channel?: string;
  /** A click on a message only the clicker sees (an ephemeral card). */
  ephemeral?: boolean;
}): string {
  const action = {
    type: 'button',
    action_id: opts.actionId,
    block_id: 'invoice_actions',
    text: { type: 'plain_text', text: 'Refresh', emoji: true },
    action_ts: '1700000000.123456',
    ...(opts.value === undefined ? {} : { value: opts.value }),
    ...(opts.url === undefined ? {} : { url: opts.url }),
  };
  const payload = {
    type: 'block_actions',
    user: {
      id: opts.user ?? 'U0CLICKER',
      username: 'clicker',
      name: 'clicker',
      team_id: opts.userTeam ?? 'T0HOME',
    },
    api_app_id: 'A0APP',
    token: 'deprecated-verification-token',
    container: {
      type: 'message',
      message_ts: '1700000000.000100',
      channel_id: opts.channel ?? 'C0SUPPORT',
      is_ephemeral: opts.ephemeral ?? false,
    },
    trigger_id: '13345224609.738474920.8088930838d88f008e0',
    team: { id: 'T0HOME', domain: 'home' },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: opts.channel ?? 'C0SUPPORT', name: 'support' },
    message: { type: 'message', ts: '1700000000.000100', text: 'invoice', blocks: [] },
    response_url: opts.responseUrl,
    actions: [action],
  };
  return `payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

export function linkSharedBody(urls: string[], opts: { eventId?: string } = {}): string {
  return JSON.stringify({
    token: 'deprecated-verification-token',
    team_id: 'T0HOME',
    api_app_id: 'A0APP',
    type: 'event_callback',
    event_id: opts.eventId ?? `Ev${Date.now()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: 'T0HOME', user_id: 'U0BOT', is_bot: true, is_enterprise_install: false }],
    event: {
      type: 'link_shared',
      channel: 'C0SUPPORT',
      is_bot_user_member: true,
      user: 'U0PASTER',
      message_ts: '1700000000.000200',
      unfurl_id: 'C0SUPPORT.1700000000.000200.abc',
      source: 'conversations_history',
      event_ts: '1700000000.000200',
      links: urls.map((url) => ({ domain: new URL(url).hostname, url })),
    },
  });
}

export interface SlackPostResult {
  status: number;
  body: string;
  ms: number;
  json: () => Record<string, unknown>;
}

/** POSTs a body to the bot as Slack would, signed with `secret`, timing the acknowledgement. */
export async function postToBot(
  url: string,
  body: string,
  secret: string,
  opts: SignOptions & { contentType?: string } = {},
): Promise<SlackPostResult> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': opts.contentType ?? 'application/x-www-form-urlencoded',
      'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
      ...signatureHeaders(secret, body, opts),
    },
    body,
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text,
    ms: performance.now() - started,
    json: () => JSON.parse(text) as Record<string, unknown>,
  };
}

/** A message shortcut (`message_action`) on a message, form-encoded as Slack sends it. */
export function messageActionBody(opts: {
  callbackId: string;
  message: Record<string, unknown>;
  responseUrl: string;
  channel?: string;
  user?: string;
  /** The person's own team. */
  userTeam?: string;
}): string {
  const payload = {
    type: 'message_action',
    token: 'deprecated-verification-token',
    action_ts: '1700000000.123456',
    team: { id: 'T0HOME', domain: 'home' },
    user: {
      id: opts.user ?? 'U0AGENT',
      username: 'agent',
      team_id: opts.userTeam ?? 'T0HOME',
      name: 'agent',
    },
    channel: { id: opts.channel ?? 'C0SUPPORT', name: 'support' },
    is_enterprise_install: false,
    enterprise: null,
    callback_id: opts.callbackId,
    trigger_id: '13345224609.738474920.8088930838d88f008e0',
    response_url: opts.responseUrl,
    message_ts: opts.message.ts,
    message: { type: 'message', user: 'U0CUSTOMER', ...opts.message },
  };
  return `payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

/** An Events API callback wrapping `event`, as JSON. */
export function eventBody(event: Record<string, unknown>, opts: { eventId?: string } = {}): string {
  return JSON.stringify({
    token: 'deprecated-verification-token',
    team_id: 'T0HOME',
    api_app_id: 'A0APP',
    type: 'event_callback',
    event_id: opts.eventId ?? `Ev${Date.now()}${Math.random().toString(36).slice(2, 6)}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: 'T0HOME', user_id: 'U0BOT', is_bot: true, is_enterprise_install: false }],
    event,
  });
}

/** A `function_executed` event for a custom workflow step, with its own short-lived token. */
export function functionExecutedBody(
  callbackId: string,
  inputs: Record<string, unknown>,
  executionId: string,
): string {
  return eventBody({
    type: 'function_executed',
    function: { id: 'Fn0STEP', callback_id: callbackId, title: 'Get invoice', type: 'app' },
    inputs,
    function_execution_id: executionId,
    workflow_execution_id: 'Wx0WORKFLOW',
    event_ts: `${Math.floor(Date.now() / 1000)}.000100`,
    bot_access_token: 'xwfp-e2e-function-token-0000',
  });
}
