import type { SlackEventMiddlewareArgs, webApi } from '@slack/bolt';
import type { EntityMetadata, LinkUnfurls } from '@slack/types';
import type { Tracked } from '../../pipeline/tracked.js';
import { noteDroppedEntity } from '../../slack/entity-warning.js';
import { invoiceUnfurl } from '../../views/invoice.js';
import { invoiceCardEntity } from '../../views/invoice-entity.js';
import { countedCall, type ListenerDeps } from '../deps.js';
import { parsePaymentLink } from '../invoice-input.js';

/** The part of Bolt's WebClient this listener uses. */
export interface UnfurlClient {
  chat: { unfurl(args: webApi.ChatUnfurlArguments): Promise<unknown> };
}

/** Links looked up per message at most; a message pasting more gets the first ones unfurled. */
const MAX_UNFURLS = 5;

/**
 * A pasted payment link gets a compact invoice card (`chat.unfurl`), a Work Object where Slack has
 * them on (its entity: src/views/invoice-entity.ts). A link that is malformed or
 * names no invoice is left alone: no card, no error shown, nothing thrown.
 */
export function createLinkSharedEvent(deps: ListenerDeps) {
  return async ({
    event,
    body,
    client,
  }: SlackEventMiddlewareArgs<'link_shared'> & { client: UnfurlClient }): Promise<Tracked> => {
    // Slack retries an event it thinks went unanswered; one unfurl per event, whichever instance gets it.
    if (!(await deps.firstSight(`event:${body.event_id}`))) return { outcome: 'duplicate' };
    // A link a guest of the workspace pasted is not unfurled: the refusal is the outcome, nothing is shown.
    const refused = await deps.access.refusal({
      who: { userId: event.user },
      where: { channelId: event.channel },
      what: 'read_invoice',
    });
    if (refused) return { outcome: refused };
    const wanted = event.links
      .flatMap(({ url }) => {
        const id = parsePaymentLink(url, deps.payUrl);
        return id ? [{ url, id }] : [];
      })
      .slice(0, MAX_UNFURLS);
    if (wanted.length === 0) return { outcome: 'no_payment_link' };
    const invoiceId = wanted.map((l) => l.id).join(',');

    const now = deps.clock();
    const found = await Promise.allSettled(
      wanted.map(async ({ url, id }) => {
        const invoice = await deps.payments.getInvoice(id);
        // A preview in someone's composer is in no conversation yet.
        await deps.watches.lookedUp(event.source === 'composer' ? undefined : event.channel, invoice);
        const card = invoiceUnfurl(invoice, now, { watchable: deps.watches.watchable(invoice) });
        return [
          url,
          card,
          invoiceCardEntity(invoice, { installation: deps.installation, appUnfurlUrl: url }),
        ] as const;
      }),
    );
    const unfurls: LinkUnfurls = {};
    const entities: EntityMetadata[] = [];
    for (const result of found) {
      if (result.status === 'fulfilled') {
        unfurls[result.value[0]] = result.value[1];
        entities.push(result.value[2]);
      } else deps.logger.warn({ err: result.reason }, 'no unfurl for a payment link');
    }
    const unfurled = Object.keys(unfurls).length;
    if (unfurled === 0) return { outcome: 'no_invoice', invoiceId };

    const { unfurl_id: unfurlId, source } = event;
    try {
      // Composer previews carry an unfurl_id and source instead of a real message ts. The blocks
      // are today's card; the entities make it a Work Object where Slack has them turned on.
      const metadata = { entities };
      const answer = await countedCall(deps, 'chat.unfurl', () =>
        client.chat.unfurl(
          unfurlId && (source === 'composer' || source === 'conversations_history')
            ? { unfurl_id: unfurlId, source, unfurls, metadata }
            : { channel: event.channel, ts: event.message_ts, unfurls, metadata },
        ),
      );
      await noteDroppedEntity(deps.firstSight, deps.logger, 'chat.unfurl', answer);
      return { outcome: 'ok', invoiceId, counts: { unfurled } };
    } catch (error) {
      deps.logger.warn({ err: error }, 'chat.unfurl failed');
      return { outcome: 'unfurl_failed', invoiceId };
    }
  };
}
