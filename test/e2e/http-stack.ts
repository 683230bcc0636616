import { expect } from 'vitest';
import {
  type CommandFields,
  commandBody,
  postToBot,
  type SignOptions,
  type SlackPostResult,
} from '../support/slack-requests.js';
import { SECRETS } from './harness.js';
import { useStack } from './use-stack.js';

/**
 * The stack of the HTTP-mode end-to-end tests (http.test.ts): the started bot, driven the way
 * Slack drives it, and what it answered in acks. `stack` is a live binding, set by `useHttpStack`.
 */

export const ACK_DEADLINE_MS = 3000;
export let stack: ReturnType<typeof useStack>;
/** Everything the bot answered in acks, for the leak check. */
export const ackBodies: string[] = [];

/** Starts the stack for the file; call once, at the top of a test file. */
export function useHttpStack(): void {
  stack = useStack();
}

export async function post(
  body: string,
  opts: SignOptions & { contentType?: string } = {},
): Promise<SlackPostResult> {
  const result = await postToBot(`${stack.bot.url}/slack/events`, body, SECRETS.signingSecret, opts);
  ackBodies.push(result.body);
  return result;
}

/** Sends a slash command; resolves with the ack and the reply the user ends up seeing. */
export async function command(
  name: CommandFields['command'],
  text: string,
  fields: Partial<CommandFields> = {},
) {
  const responseUrl = stack.slack.responseUrl();
  const ack = await post(commandBody({ command: name, text, response_url: responseUrl, ...fields }));
  expect(ack.status).toBe(200);
  expect(ack.ms).toBeLessThan(ACK_DEADLINE_MS);
  const reply = ack.body ? ack.json() : (await stack.slack.waitForPost(responseUrl)).body;
  return { ack, reply, via: ack.body ? 'ack' : 'response_url', responseUrl };
}
