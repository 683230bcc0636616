import type { SlackEventMiddlewareArgs, webApi } from '@slack/bolt';
import type { PanelClient } from '../../src/listeners/events/entity-details-requested.js';
import { eventBody } from './bolt.js';

/** What entity.presentDetails was called with, per call. */
export type Presented = webApi.EntityPresentDetailsArguments;

/**
 * Bolt's arguments for an `entity_details_requested` event (someone clicked an invoice's Work
 * Object), with a client that records each `entity.presentDetails` call.
 */
export function entityDetailsArgs(opts: {
  refId: string;
  user?: string;
  locale?: string;
  channel?: string;
  eventId?: string;
  refType?: string;
}): {
  args: SlackEventMiddlewareArgs<'entity_details_requested'> & { client: PanelClient };
  presented: Presented[];
} {
  const event = {
    type: 'entity_details_requested' as const,
    user: opts.user ?? 'U0OPENER',
    trigger_id: '1234.5678.abcdef',
    link: { url: 'https://pay.example.com/pay/x', domain: 'pay.example.com' },
    entity_url: 'https://pay.example.com/pay/x',
    user_locale: opts.locale ?? 'en-US',
    event_ts: '1700000000.000300',
    external_ref: { id: opts.refId, type: opts.refType ?? 'invoice' },
    ...(opts.channel ? { channel: opts.channel, message_ts: '1700000000.000200' } : {}),
  };
  const presented: Presented[] = [];
  const client: PanelClient = {
    entity: {
      presentDetails: async (args) => {
        presented.push(args);
        return { ok: true };
      },
    },
  };
  return {
    args: {
      event,
      payload: event,
      body: eventBody(event, opts.eventId),
      client,
    },
    presented,
  };
}

/** A presented panel's custom fields, by key: `{ status: 'Open', amount: '149.99 USDT', … }`. */
export function panelFields(call: Presented | undefined): Record<string, unknown> {
  const fields = call?.metadata?.entity_payload.custom_fields ?? [];
  return Object.fromEntries(fields.map((f) => [f.key, f.value]));
}
