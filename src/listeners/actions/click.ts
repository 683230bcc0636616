import type { BlockAction, ButtonAction, RespondArguments, SlackActionMiddlewareArgs } from '@slack/bolt';
import { acknowledge, deliver } from '../../pipeline/delivery.js';
import { type Reply, toResponse } from '../../pipeline/reply.js';
import type { Tracked } from '../../pipeline/tracked.js';
import type { ListenerDeps } from '../deps.js';

export type ButtonArgs = SlackActionMiddlewareArgs<BlockAction<ButtonAction>>;
export type ButtonHandler = (args: ButtonArgs) => Promise<Tracked>;

/** What a click came to. */
export interface ClickAnswer {
  result: Reply;
  /**
   * What the click's response_url gets; by default the reply as a new message beside the
   * clicked one (`replace_original: false`), seen as the reply says.
   */
  response?: RespondArguments;
  invoiceId?: string | undefined;
}

/**
 * A button answered through the click's own response_url: acknowledged at once (a click's ack
 * carries no message), then answered, then tracked with how the answer travelled.
 */
export function answerClick(
  deps: Pick<ListenerDeps, 'logger' | 'responseUrls'>,
  answer: (click: Pick<ButtonArgs, 'body' | 'action'>) => Promise<ClickAnswer>,
): ButtonHandler {
  return async ({ ack, body, action }) => {
    await acknowledge(ack, deps.logger);
    const { result, response, invoiceId } = await answer({ body, action });
    const message = response ?? { ...toResponse(result), replace_original: false };
    const delivery = await deliver(deps.responseUrls, body.response_url, message, deps.logger);
    return { outcome: result.outcome, invoiceId, delivery };
  };
}
