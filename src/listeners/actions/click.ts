import type { BlockAction, ButtonAction, RespondArguments, SlackActionMiddlewareArgs } from '@slack/bolt';
import type { Action } from '../../access.js';
import { acknowledge, deliver } from '../../pipeline/delivery.js';
import { settle } from '../../pipeline/error-policy.js';
import { type Reply, reply, toResponse } from '../../pipeline/reply.js';
import type { Tracked } from '../../pipeline/tracked.js';
import { staleButtonMessage } from '../../views/errors.js';
import type { ListenerDeps } from '../deps.js';
import { type HomeClient, publishHome } from '../home.js';
import { type ButtonValue, type ButtonValueKind, parseButtonValue } from './button-value.js';

/** A click, with the part of Bolt's client a button may use (the App Home is published again through it). */
export type ButtonArgs = SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & { client: HomeClient };
export type ButtonHandler = (args: ButtonArgs) => Promise<Tracked>;
export type Click = Pick<ButtonArgs, 'body' | 'action'>;

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

/** What a button carries and what a click on it asks to do. */
export interface ButtonSpec<K extends ButtonValueKind> {
  /** Which of the bot's button values it carries (src/listeners/actions/button-value.ts). */
  value: K;
  /** What the click asks of the access rules. */
  what: (body: Click['body']) => Action;
}

/** The container of a clicked message: where it is, and whether only the clicker sees it. */
export const containerOf = (body: Click['body']) =>
  body.container as { type?: string; channel_id?: string; message_ts?: string; is_ephemeral?: boolean };

/** The channel a click came from: its message's, or its container's (an ephemeral message has no `channel`). */
export const channelOf = (body: Click['body']): string | undefined =>
  body.channel?.id ?? containerOf(body).channel_id;

/**
 * A click on a button the bot did not put there as it is (its value, or where it sits): nothing is
 * done, and the clicker is told how to get a fresh card.
 */
export const staleClick = (): ClickAnswer => ({
  result: reply(staleButtonMessage(), 'ephemeral', 'stale_button'),
});

/**
 * A button answered through the click's own response_url: acknowledged at once (a click's ack
 * carries no message), then answered, then tracked with how the answer travelled. A click in
 * the App Home has no response_url: the person's Home is published again instead, showing what
 * the click changed. Before the
 * button's own work: a value the bot did not write is answered "that button no longer works",
 * and the access rules are asked what the click would do. Either way the clicked message stays
 * as it was and nothing else is called.
 */
export function answerClick<K extends ButtonValueKind>(
  deps: ListenerDeps,
  spec: ButtonSpec<K>,
  answer: (click: Click, value: ButtonValue<K>) => Promise<ClickAnswer>,
): ButtonHandler {
  async function answerOf(click: Click): Promise<ClickAnswer> {
    const value = parseButtonValue(spec.value, click.action.value);
    if (value === undefined) {
      // The value itself stays out of the log: it is whatever the sender put there.
      deps.logger.warn({ action: click.action.action_id }, 'a button value the bot did not write');
      return staleClick();
    }
    // A refusal, or anything the button's own work did not answer, is told to the clicker alone.
    const rest: Omit<ClickAnswer, 'result'> = {};
    const result = await settle(deps.logger, async () => {
      await deps.access.demand({
        who: { userId: click.body.user.id, teamId: click.body.user.team_id },
        where: { channelId: channelOf(click.body) },
        what: spec.what(click.body),
      });
      const { result: answered, ...more } = await answer(click, value);
      Object.assign(rest, more);
      return answered;
    });
    return { ...rest, result };
  }

  return async ({ ack, body, action, client }) => {
    await acknowledge(ack, deps.logger);
    const { result, response, invoiceId } = await answerOf({ body, action });
    if (containerOf(body).type === 'view') {
      await publishHome(deps, client, body.user.id);
      return { outcome: result.outcome, invoiceId, delivery: 'view' };
    }
    const message = response ?? { ...toResponse(result), replace_original: false };
    const delivery = await deliver(deps.responseUrls, body.response_url, message, deps.logger);
    return { outcome: result.outcome, invoiceId, delivery };
  };
}
