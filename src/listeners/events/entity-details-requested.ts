import type { SlackEventMiddlewareArgs, webApi } from '@slack/bolt';
import type { SlackEvent } from '@slack/types';
import { InvoiceNotFoundError, parseInvoiceId } from '../../payments/index.js';
import { outcomeOf, reportFailure } from '../../pipeline/error-policy.js';
import { eventListener } from '../../pipeline/kinds.js';
import type { Tracked } from '../../pipeline/tracked.js';
import {
  INVOICE_REF_TYPE,
  invoicePanelEntity,
  PANEL_NOT_CONNECTED,
  PANEL_NOT_FOUND,
  type PanelError,
  panelRefusal,
  parseInvoiceRefId,
} from '../../views/invoice-entity.js';
import type { EventArgs } from '../args.js';
import { countedCall, type ListenerDeps } from '../deps.js';
import type { Answer } from '../workspaces/not-connected.js';

/** The part of Bolt's WebClient the side panel uses. */
export interface PanelClient {
  entity: { presentDetails(args: webApi.EntityPresentDetailsArguments): Promise<unknown> };
}

/** Who opened a panel, where, and what Slack needs to answer them. */
export interface PanelRequest {
  userId: string;
  /** The person's own team, when the request says it. */
  teamId?: string | undefined;
  triggerId: string;
  /** `user_locale`; a click in the panel carries none, so it keeps the one the panel was opened with. */
  locale: string;
  channelId?: string | undefined;
  externalRef?: Extract<SlackEvent, { type: 'entity_details_requested' }>['external_ref'];
  /** When the click came (`performance.now()`), if before this call: its trigger's time runs from then. */
  startedAt?: number;
}

/** The invoice a ref names, when this installation wrote it: a ref of another installation's card is none. */
function invoiceOfRef(deps: ListenerDeps, ref: PanelRequest['externalRef']) {
  if (ref?.type !== undefined && ref.type !== INVOICE_REF_TYPE) return undefined;
  const scoped = ref ? parseInvoiceRefId(ref.id) : undefined;
  if (scoped?.installation !== deps.installation) return undefined;
  return parseInvoiceId(scoped.invoiceId);
}

/**
 * How long after the click the panel's reads may run: a trigger lasts 3 seconds
 * (api.slack.com/docs/triggers), and `entity.presentDetails` needs the rest.
 */
export const PANEL_READ_MS = 2000;

/** `work`'s result if it settles within PANEL_READ_MS of `started`, else `undefined` (its late end ignored). */
async function withinTrigger<T>(started: number, work: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, started + PANEL_READ_MS - performance.now()), undefined);
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Fills an invoice's side panel for the person who opened it (`entity.presentDetails`), or shows
 * Slack's error view instead: `restricted` with the reason in words when the access rules refuse
 * them (`read_invoice_panel`: members of this workspace's organisation, no guest), `not_found` for
 * an invoice this installation does not know. Never throws: the outcome says how it went.
 */
export async function presentPanel(
  deps: ListenerDeps,
  client: PanelClient,
  request: PanelRequest,
): Promise<Tracked> {
  const present = (
    args: { metadata: webApi.EntityPresentDetailsArguments['metadata'] } | { error: PanelError },
  ) =>
    countedCall(deps, 'entity.presentDetails', () =>
      client.entity.presentDetails({ trigger_id: request.triggerId, ...args }),
    );
  const started = request.startedAt ?? performance.now();
  const invoiceId = invoiceOfRef(deps, request.externalRef);
  try {
    const refused = await deps.access.refusal({
      who: { userId: request.userId, teamId: request.teamId },
      where: { channelId: request.channelId },
      what: 'read_invoice_panel',
    });
    if (refused) {
      await present({ error: panelRefusal(refused) });
      return { outcome: refused, invoiceId };
    }
    if (!invoiceId) {
      await present({ error: PANEL_NOT_FOUND });
      return { outcome: 'no_invoice' };
    }
    const read = await withinTrigger(
      started,
      Promise.all([
        deps.payments.getInvoice(invoiceId),
        deps.watches.ofInvoice(invoiceId),
        deps.watches.statesSeen(invoiceId),
      ]),
    );
    if (!read) {
      await present({ error: { status: 'timeout' } });
      return { outcome: 'timeout', invoiceId };
    }
    const [invoice, watches, seen] = read;
    const metadata = invoicePanelEntity(invoice, {
      installation: deps.installation,
      locale: request.locale,
      channelId: request.channelId,
      watchable: deps.watches.watchable(invoice),
      seen,
      watches: watches.map((w) => ({
        channelId: w.channel_id,
        startedAt: new Date(w.started_at),
        endedAt: w.ended_at === null ? undefined : new Date(w.ended_at),
      })),
    });
    await present({ metadata });
    return { outcome: 'ok', invoiceId };
  } catch (error) {
    return failed(deps, error, invoiceId, present);
  }
}

/**
 * A panel that could not be filled: logged, and Slack's error view shown instead (`not_found`
 * for an invoice the service does not know, else `internal_error`), so the opener is not left
 * waiting; when even that call fails, only logged.
 */
async function failed(
  deps: ListenerDeps,
  error: unknown,
  invoiceId: string | undefined,
  present: (args: { error: PanelError }) => Promise<unknown>,
): Promise<Tracked> {
  const outcome = outcomeOf(error);
  if (outcome === 'internal_error') deps.logger.warn({ err: error }, 'could not fill the side panel');
  else reportFailure(deps.logger, error);
  await present({
    error: error instanceof InvoiceNotFoundError ? PANEL_NOT_FOUND : { status: 'internal_error' },
  }).catch((failure: unknown) => deps.logger.warn({ err: failure }, 'entity.presentDetails failed'));
  return { outcome: outcome === 'internal_error' ? 'panel_failed' : outcome, invoiceId };
}

/**
 * Someone clicked an invoice's Work Object (an unfurl, the `/invoice` card, a live card) or
 * refreshed its side panel. Bolt has already acknowledged the event; Slack re-sends it on a
 * refresh and after 10 minutes, each with a trigger of its own, so only a retry of the same event
 * id is skipped.
 */
export function createEntityDetailsRequested(deps: ListenerDeps) {
  return async ({
    event,
    body,
    client,
  }: SlackEventMiddlewareArgs<'entity_details_requested'> & { client: PanelClient }): Promise<Tracked> => {
    if (!(await deps.firstSight(`event:${body.event_id}`))) return { outcome: 'duplicate' };
    return presentPanel(deps, client, {
      userId: event.user,
      triggerId: event.trigger_id,
      locale: event.user_locale,
      channelId: event.channel,
      externalRef: event.external_ref,
    });
  };
}

/** While the payment account is not connected, the panel says so, and reads nothing. */
export const panelNotConnected: Answer<EventArgs<'entity_details_requested'>> = (nc, name) =>
  eventListener(nc.deps, name, async ({ event, client }: EventArgs<'entity_details_requested'>) => {
    await client.entity
      .presentDetails({ trigger_id: event.trigger_id, error: PANEL_NOT_CONNECTED })
      .catch((failure: unknown) => nc.deps.logger.warn({ err: failure }, 'entity.presentDetails failed'));
    return { outcome: 'not_connected' };
  });
