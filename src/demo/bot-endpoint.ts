import { createHmac, randomUUID } from 'node:crypto';
import type { Workspace } from './workspace.js';

/**
 * The bot's HTTP endpoint (`…/slack/events`) as the demo's Slack sees it: where it is once the
 * bot is connected, and each request sent to it signed as Slack signs them, with Slack's notice
 * to you when the bot does not take it.
 */

/** Slack waits this long for an acknowledgement, then tells the person the app did not answer. */
const ACK_WAIT_MS = 3000;

export class BotEndpoint {
  readonly signingSecret = randomUUID().replace(/-/g, '');
  #eventsUrl: string | undefined;

  constructor(private readonly workspace: Workspace) {}

  /** Whether the bot has been connected and takes requests. */
  get ready(): boolean {
    return this.#eventsUrl !== undefined;
  }

  /** From now on, requests go to the bot at this address. */
  connect(eventsUrl: string): void {
    this.#eventsUrl = eventsUrl;
    this.workspace.changed();
  }

  /**
   * Sends `body` to the bot, signed; resolves with its acknowledgement's body, or undefined when
   * it did not take the request (then you see a notice naming `what`, in the thread `threadTs`).
   */
  async send(
    body: string,
    contentType: string,
    what: string,
    threadTs?: string,
  ): Promise<string | undefined> {
    const eventsUrl = this.#eventsUrl;
    if (!eventsUrl) {
      this.workspace.notice('The bot is still starting. Try again in a moment.', threadTs);
      return undefined;
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = `v0=${createHmac('sha256', this.signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    try {
      const response = await fetch(eventsUrl, {
        method: 'POST',
        headers: {
          'content-type': contentType,
          'x-slack-request-timestamp': String(timestamp),
          'x-slack-signature': signature,
        },
        body,
        signal: AbortSignal.timeout(ACK_WAIT_MS),
      });
      const text = await response.text();
      if (response.ok) return text;
      this.workspace.notice(
        `${what} failed with the error "dispatch_failed" (HTTP ${response.status})`,
        threadTs,
      );
    } catch {
      this.workspace.notice(`${what} failed with the error "operation_timeout"`, threadTs);
    }
    return undefined;
  }
}
