import type { RespondArguments, RespondFn, SlackCommandMiddlewareArgs, SlashCommand } from '@slack/bolt';
import { AccessDeniedError } from '../access.js';
import type { Logger } from '../logger.js';
import { isPaymentError } from '../payments/index.js';
import type { Message } from '../views/blocks.js';
import { errorCode, errorMessage } from '../views/errors.js';
import type { ListenerDeps, Visibility } from './deps.js';

/** What one request asked and of whom, logged as one line when it is answered. */
export interface RequestLog {
  kind: 'command' | 'action' | 'event';
  name: string;
  user?: string | undefined;
  team?: string | undefined;
  channel?: string | undefined;
  invoiceId?: string | undefined;
}

export interface Reply {
  message: Message;
  visibility: Visibility;
  /** `ok`, `help`, `usage`, or an error code: what the request log records. */
  outcome: string;
  failed: boolean;
}

export const reply = (message: Message, visibility: Visibility, outcome = 'ok'): Reply => ({
  message,
  visibility,
  outcome,
  failed: false,
});

/** A command handler: parse, check, fetch, render. It may throw; errors become ephemeral replies. */
export type CommandHandler = (command: SlashCommand, log: RequestLog) => Promise<Reply>;

/** Outcomes the person caused (a typo, an unknown id, a refusal): the request line says it all. */
const PERSONAL_OUTCOMES = new Set(['invalid_invoice_id', 'invoice_not_found']);

/**
 * Runs `work` and turns any failure into an ephemeral reply explaining it. A failure of the
 * payment service is logged as a warning with its details (status, schema issues); anything
 * unexpected is a bug, logged as an error with its stack.
 */
export async function settle(logger: Logger, work: () => Promise<Reply>, intro?: string): Promise<Reply> {
  try {
    return await work();
  } catch (error) {
    if (isPaymentError(error)) {
      if (!PERSONAL_OUTCOMES.has(error.code)) logger.warn({ err: error }, error.message);
    } else if (!(error instanceof AccessDeniedError)) {
      logger.error({ err: error }, 'request failed');
    }
    return {
      message: errorMessage(error, intro),
      visibility: 'ephemeral',
      outcome: errorCode(error),
      failed: true,
    };
  }
}

export const toResponse = (r: Reply): RespondArguments => ({
  response_type: r.visibility,
  text: r.message.text,
  blocks: r.message.blocks,
});

/** Posts to the response_url; a failure (expired URL, Slack down) is logged, never thrown. */
export async function deliver(
  respond: RespondFn,
  message: RespondArguments,
  logger: Logger,
): Promise<boolean> {
  try {
    await respond(message);
    return true;
  } catch (error) {
    logger.warn({ err: error }, 'could not post the reply to response_url');
    return false;
  }
}

export function logRequest(
  logger: Logger,
  log: RequestLog,
  outcome: string,
  startedAt: number,
  extra: object = {},
): void {
  logger.info(
    { ...log, outcome, ms: Math.round(performance.now() - startedAt), ...extra },
    `${log.kind} ${log.name}`,
  );
}

/**
 * Slack's 3-second ack, written once for every command. When the handler settles within
 * `fastPathMs` (about 1.5 s) its reply rides in the ack itself, one round trip less for the user;
 * otherwise an empty ack goes out then and the reply follows through `respond()`.
 */
export function commandListener(deps: ListenerDeps, handle: CommandHandler) {
  return ({ command, ack, respond }: SlackCommandMiddlewareArgs): Promise<void> =>
    deps.inflight.run(async () => {
      const startedAt = performance.now();
      const log: RequestLog = {
        kind: 'command',
        name: command.command,
        user: command.user_id,
        team: command.team_id,
        channel: command.channel_id,
      };
      const answer = settle(deps.logger, () => handle(command, log));
      let timer: NodeJS.Timeout | undefined;
      const early = await Promise.race([
        answer,
        new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), deps.fastPathMs);
        }),
      ]);
      clearTimeout(timer);

      let delivery: 'ack' | 'response_url' | 'failed';
      let final: Reply;
      if (early) {
        final = early;
        delivery = (await acknowledge(() => ack(toResponse(early)), deps.logger)) ? 'ack' : 'failed';
      } else {
        await acknowledge(() => ack(), deps.logger);
        final = await answer;
        delivery = (await deliver(respond, toResponse(final), deps.logger)) ? 'response_url' : 'failed';
      }
      logRequest(deps.logger, log, final.outcome, startedAt, { delivery });
    });
}

async function acknowledge(ack: () => Promise<void>, logger: Logger): Promise<boolean> {
  try {
    await ack();
    return true;
  } catch (error) {
    logger.error({ err: error }, 'could not acknowledge the request');
    return false;
  }
}
