import { setImmediate as afterPendingIo } from 'node:timers/promises';
import type { SlackCommandMiddlewareArgs, SlashCommand } from '@slack/bolt';
import type { ResponseUrlClient } from '../slack/response-url.js';
import { acknowledge, deliver } from './delivery.js';
import { settle } from './error-policy.js';
import type { Delivery } from './outcome.js';
import { type Reply, toResponse } from './reply.js';
import type { Tracked, TrackingDeps } from './tracked.js';

/** A command handler: parse, check, fetch, render. It may throw; errors become ephemeral replies. */
export type CommandHandler = (command: SlashCommand) => Promise<Reply>;

export interface AckRaceDeps extends TrackingDeps {
  /** How long a command waits for its reply before acknowledging empty (docs/slack.md#ack). */
  fastPathMs: number;
  responseUrls: ResponseUrlClient;
}

/**
 * Slack's 3-second ack, written once for every command. When the handler settles within
 * `fastPathMs` (about 1.5 s) its reply rides in the ack itself, one round trip less for the
 * person; otherwise an empty ack goes out then and the reply follows through `respond()`.
 */
export function ackRace(deps: AckRaceDeps, handle: CommandHandler) {
  return async ({ command, ack }: SlackCommandMiddlewareArgs): Promise<Tracked> => {
    const respond = (reply: Reply) =>
      deliver(deps.responseUrls, command.response_url, toResponse(reply), deps.logger);
    const answer = settle(deps.logger, () => handle(command));
    let timer: NodeJS.Timeout | undefined;
    const early = await Promise.race([
      answer,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(resolve, deps.fastPathMs, undefined);
      }),
    ]);
    clearTimeout(timer);

    let final: Reply;
    let delivery: Delivery;
    if (early) {
      final = early;
      // An ack that cannot be sent (a Socket Mode connection that closed) loses nothing: the
      // response_url takes the same reply (docs/slack.md#socket-mode).
      delivery = (await acknowledge(() => ack(toResponse(early)), deps.logger))
        ? 'ack'
        : await respond(early);
    } else {
      await acknowledge(() => ack(), deps.logger);
      final = await answer;
      delivery = await respond(final);
    }
    // What follows the reply (its sighting, the log line) waits for the I/O already in: in a burst,
    // the other people's answers from the service go out first.
    await afterPendingIo();
    await final.afterwards?.();
    return { outcome: final.outcome, invoiceId: final.invoiceId, delivery };
  };
}
