import type { RespondArguments } from '@slack/bolt';
import type { Invoice } from '../../payments/index.js';
import { reportFailure, settle } from '../../pipeline/error-policy.js';
import { type Reply, reply } from '../../pipeline/reply.js';
import { SlackPostError } from '../../slack/calls.js';
import { errorMessage } from '../../views/errors.js';
import { invoiceMessage } from '../../views/invoice.js';
import {
  alreadySharedMessage,
  shareAgainMessage,
  sharedMessage,
  shareInviteFirst,
  shareUnconfirmedMessage,
} from '../../views/shortcut.js';
import type { ListenerDeps } from '../deps.js';
import type { ButtonValue } from './button-value.js';
import { answerClick, type Click, type ClickAnswer, channelOf, containerOf, staleClick } from './click.js';

/** The most tries one private answer offers after shares that posted nothing. */
const MAX_ATTEMPT = 99;

/** A workspace's subdomain as Slack sends it (`team.domain`), for a link to a message. */
const TEAM_DOMAIN = /^[a-z0-9][a-z0-9-]*$/i;

/**
 * The shared card's permalink, as Slack writes one (`chat.getPermalink`): the workspace's own
 * address, the channel, the message ts without its dot, and the thread it is in. Undefined when
 * the click does not name the workspace's domain.
 */
function permalinkOf(
  click: Click['body'],
  channel: string,
  ts: string,
  threadTs?: string,
): string | undefined {
  const domain = click.team?.domain;
  if (domain === undefined || !TEAM_DOMAIN.test(domain)) return undefined;
  const url = new URL(`https://${domain}.slack.com/archives/${channel}/p${ts.replace('.', '')}`);
  if (threadTs !== undefined) {
    url.searchParams.set('thread_ts', threadTs);
    url.searchParams.set('cid', channel);
  }
  return url.href;
}

/**
 * The one claim a click on one private answer's Share in thread makes, shared by every instance
 * (`firstSight`): the answer (its ts, or the thread it is about), the person, the invoice, the try.
 */
const claimOf = (body: Click['body'], channelId: string, placed: ButtonValue<'placed'>) =>
  `share:${channelId}:${containerOf(body).message_ts ?? placed.threadTs ?? ''}:${body.user.id}:${placed.id}:${placed.attempt ?? 0}`;

/** The private answer replaced with `message`: no button of it is left to click again. */
const replacing = (message: Reply['message']): RespondArguments => ({
  response_type: 'ephemeral',
  replace_original: true,
  text: message.text,
  blocks: message.blocks,
});

/**
 * Share in thread, on the shortcut's private answer: the full invoice card goes in the thread of
 * the message the shortcut was used on, saying who shared it. The first click claims the share
 * for all instances; the private answer is then replaced by what happened: a link to the card;
 * when Slack surely took nothing (the bot is not in the channel, Slack asked to slow down or
 * refused it), why, and the card again with buttons that are a new try; when Slack did not
 * answer, that the card may be there. A second click of the same answer posts nothing. A failure
 * before the claim (the service cannot read the invoice) leaves the answer and its buttons as
 * they were, and is told beside it.
 */
export function createShareInvoiceAction(deps: ListenerDeps) {
  async function share(
    body: Click['body'],
    channelId: string,
    placed: ButtonValue<'placed'>,
    invoice: Invoice,
  ) {
    const { id, threadTs } = placed;
    const now = deps.clock();
    const card = invoiceMessage(invoice, {
      now,
      sharedBy: body.user.id,
      watchable: deps.watches.watchable(invoice),
    });
    try {
      const ts = await deps.poster.post({ channel: channelId, threadTs, ...card });
      const permalink = permalinkOf(body, channelId, ts, threadTs);
      return reply(sharedMessage(invoice, permalink), 'ephemeral', 'ok', id);
    } catch (error) {
      if (!(error instanceof SlackPostError)) throw error;
      const notInChannel = error.failure === 'not_in_channel';
      // Where the bot is not, a person is to invite it: nothing for an operator to see.
      if (!notInChannel) reportFailure(deps.logger, error);
      if (error.failure === 'transient')
        return reply(shareUnconfirmedMessage(invoice), 'ephemeral', 'slack_busy', id);
      const problem = notInChannel ? shareInviteFirst(channelId) : errorMessage(error);
      const outcome = notInChannel ? 'not_in_channel' : outcomeOfRefusal(error);
      // The bot writes this button with the thread it is about; without one there is no new try to offer.
      if (threadTs === undefined) return reply(problem, 'ephemeral', outcome, id);
      const lookup = { id, invoice, watchable: deps.watches.watchable(invoice) };
      const attempt = Math.min((placed.attempt ?? 0) + 1, MAX_ATTEMPT);
      return reply(shareAgainMessage(problem, lookup, { now, threadTs, attempt }), 'ephemeral', outcome, id);
    }
  }

  return answerClick(deps, { value: 'placed', what: () => 'change_card' }, async ({ body }, placed) => {
    const { id } = placed;
    const channelId = channelOf(body);
    // The bot puts this button only on messages in a conversation.
    if (channelId === undefined) return staleClick();
    let replaces = false;
    const result = await settle(deps.logger, async () => {
      const invoice = await deps.payments.getInvoice(id);
      await deps.watches.lookedUp(channelId, invoice);
      if (!(await deps.firstSight(claimOf(body, channelId, placed))))
        return reply(alreadySharedMessage(), 'ephemeral', 'duplicate', id);
      replaces = true;
      return share(body, channelId, placed, invoice);
    });
    const answer: ClickAnswer = { result, invoiceId: id };
    return replaces ? { ...answer, response: replacing(result.message) } : answer;
  });
}

/** Slack took nothing and said why: asked to slow down (`slack_busy`), or refused the card (a bug). */
const outcomeOfRefusal = (error: SlackPostError) =>
  error.failure === 'rate_limited' ? ('slack_busy' as const) : ('internal_error' as const);
