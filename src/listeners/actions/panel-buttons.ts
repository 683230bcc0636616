import type { Action } from '../../access.js';
import { acknowledge } from '../../pipeline/delivery.js';
import { settle } from '../../pipeline/error-policy.js';
import { type Reply, reply } from '../../pipeline/reply.js';
import type { Tracked } from '../../pipeline/tracked.js';
import { cut } from '../../text.js';
import { INVOICE_REF_TYPE, invoiceRefId, type PanelError, panelRefusal } from '../../views/invoice-entity.js';
import { plainWords } from '../../views/mrkdwn.js';
import { watchReplies } from '../../views/watch.js';
import type { ListenerDeps } from '../deps.js';
import { type PanelClient, type PanelRequest, presentPanel } from '../events/entity-details-requested.js';
import { startWatch } from '../watching.js';
import { type ButtonValue, parseButtonValue } from './button-value.js';
import type { ButtonArgs, ButtonHandler } from './click.js';

/**
 * The buttons of an invoice's side panel (src/views/invoice-entity.ts): Refresh, Watch and Stop
 * watching in the conversation the panel was opened from. Each acknowledges at once, asks the
 * access rules, does its work and shows the panel again with the click's own trigger, so the
 * panel says what the click changed. A click carries no `response_url`: what went wrong is
 * Slack's error view in the panel itself.
 */

type PanelValue = ButtonValue<'panel'>;

/** What a button does before the panel is shown again; `undefined` when it only shows it. */
interface PanelWork {
  what: Action;
  /** Words for a failure's title ("Could not start the watch"). */
  failed: string;
  run: (value: PanelValue & { channelId: string }, args: ButtonArgs) => Promise<Reply>;
}

/** What a button's work may come to and still show the panel: it says the rest (watched or not). */
const SHOWN: ReadonlySet<Reply['outcome']> = new Set(['ok', 'already_watched', 'not_watched']);

/** Bolt's client as a panel click gets it: it has `entity.presentDetails`. */
const panelClientOf = (client: unknown): PanelClient | undefined =>
  typeof (client as Partial<PanelClient> | undefined)?.entity?.presentDetails === 'function'
    ? (client as PanelClient)
    : undefined;

/** Slack's reference gives no length for an error view's message: it is kept to a short paragraph. */
const PANEL_MESSAGE_CHARS = 300;

/** Words from a reply's text, for Slack's error view (which shows them as written). */
const failure = (title: string, result: Reply): PanelError => ({
  status: 'custom',
  custom_title: title,
  custom_message: cut(plainWords(result.message.text), PANEL_MESSAGE_CHARS),
});

function panelButton(deps: ListenerDeps, work?: PanelWork): ButtonHandler {
  return async (args): Promise<Tracked> => {
    const startedAt = performance.now();
    const { ack, body, action } = args;
    await acknowledge(ack, deps.logger);
    const value = parseButtonValue('panel', action.value);
    const client = panelClientOf(args.client);
    if (!value || !client) {
      deps.logger.warn({ action: action.action_id }, 'a button value the bot did not write');
      return { outcome: 'stale_button' };
    }
    const request: PanelRequest = {
      userId: body.user.id,
      teamId: body.user.team_id,
      triggerId: body.trigger_id,
      locale: value.locale,
      channelId: value.channelId,
      externalRef: { id: invoiceRefId(deps.installation, value.invoiceId), type: INVOICE_REF_TYPE },
      startedAt,
    };
    const { channelId } = value;
    if (work && channelId) {
      const who = { userId: body.user.id, teamId: body.user.team_id };
      const refused = await deps.access.refusal({ who, where: { channelId }, what: work.what });
      const result = refused
        ? undefined
        : await settle(deps.logger, () => work.run({ ...value, channelId }, args));
      if (refused || (result && !SHOWN.has(result.outcome))) {
        const error = refused ? panelRefusal(refused) : failure(work.failed, result as Reply);
        await client.entity.presentDetails({ trigger_id: body.trigger_id, error });
        return { outcome: refused ?? (result as Reply).outcome, invoiceId: value.invoiceId };
      }
    }
    return presentPanel(deps, client, request);
  };
}

/** Refresh: the panel read again. */
export const createPanelRefresh = (deps: ListenerDeps) => panelButton(deps);

/** Watch: a watch started in the conversation the panel was opened from; its live card goes there. */
export const createPanelWatch = (deps: ListenerDeps) =>
  panelButton(deps, {
    what: 'change_watch',
    failed: 'Could not start the watch',
    run: ({ invoiceId, channelId }, { body }) =>
      startWatch(deps, {
        teamId: body.team?.id ?? body.user.team_id ?? '',
        channelId,
        userId: body.user.id,
        invoiceId,
      }),
  });

/** Stop watching: the watch of that conversation ended, its card and thread told as for any stop. */
export const createPanelStopWatch = (deps: ListenerDeps) =>
  panelButton(deps, {
    what: 'change_watch',
    failed: 'Could not stop the watch',
    run: async ({ invoiceId, channelId }, { body }) => {
      const stopped = await deps.watches.stopInvoice(channelId, invoiceId, body.user.id);
      return stopped.kind === 'stopped'
        ? reply(watchReplies.stopped(stopped.title), 'ephemeral')
        : reply(watchReplies.notWatched(), 'ephemeral', 'not_watched');
    },
  });
