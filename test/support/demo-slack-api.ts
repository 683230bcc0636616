import type { DemoSlack } from '../../src/demo/slack.js';

/** The bot's side of the demo's Slack: Web API calls as the Web API client makes them. */

export type Answer = Record<string, unknown>;

/** A Web API call with a JSON body, answered as Slack answers (always HTTP 200). */
export async function api(
  slack: DemoSlack,
  method: string,
  args: Answer,
  token = slack.botToken,
): Promise<Answer> {
  const response = await fetch(`${slack.apiUrl}${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(args),
  });
  return (await response.json()) as Answer;
}

/** A Web API call form-encoded, as @slack/web-api sends it: JSON-valued fields as JSON text. */
export function formCall(
  slack: DemoSlack,
  method: string,
  fields: Record<string, string>,
): Promise<Response> {
  return fetch(`${slack.apiUrl}${method}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${slack.botToken}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(fields),
  });
}

/** The `ts` of a message the bot posts in the demo channel. */
export async function post(slack: DemoSlack, args: Answer): Promise<string> {
  const answer = await api(slack, 'chat.postMessage', { channel: 'C0PAYMENTS', ...args });
  if (answer.ok !== true) throw new Error(`chat.postMessage failed: ${JSON.stringify(answer)}`);
  return String(answer.ts);
}
