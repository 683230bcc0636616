import type { SlackEventMiddlewareArgs, webApi } from '@slack/bolt';
import type { LinkUnfurls } from '@slack/types';
import { invoiceUnfurl } from '../../views/invoice.js';
import type { ListenerDeps } from '../deps.js';
import { parsePaymentLink } from '../invoice-input.js';
import { logRequest, type RequestLog } from '../reply.js';

/** The part of Bolt's WebClient this listener uses. */
export interface UnfurlClient {
  chat: { unfurl(args: webApi.ChatUnfurlArguments): Promise<unknown> };
}

/** Links looked up per message at most; a message pasting more gets the first ones unfurled. */
const MAX_LINKS = 5;

/**
 * A pasted payment link gets a compact invoice card (`chat.unfurl`). A link that is malformed or
 * names no invoice is left alone: no card, no error shown, nothing thrown.
 */
export function createLinkSharedEvent(deps: ListenerDeps) {
  return ({
    event,
    client,
  }: SlackEventMiddlewareArgs<'link_shared'> & { client: UnfurlClient }): Promise<void> =>
    deps.inflight.run(async () => {
      const startedAt = performance.now();
      const log: RequestLog = {
        kind: 'event',
        name: 'link_shared',
        user: event.user,
        channel: event.channel,
      };
      const wanted = event.links
        .flatMap(({ url }) => {
          const id = parsePaymentLink(url, deps.payUrl);
          return id ? [{ url, id }] : [];
        })
        .slice(0, MAX_LINKS);
      const now = deps.clock();
      const found = await Promise.allSettled(
        wanted.map(
          async ({ url, id }) => [url, invoiceUnfurl(await deps.payments.getInvoice(id), now)] as const,
        ),
      );
      const unfurls: LinkUnfurls = {};
      for (const result of found) {
        if (result.status === 'fulfilled') unfurls[result.value[0]] = result.value[1];
        else deps.logger.warn({ err: result.reason }, 'no unfurl for a payment link');
      }
      log.invoiceId = wanted.map((l) => l.id).join(',') || undefined;
      if (Object.keys(unfurls).length === 0) {
        logRequest(deps.logger, log, wanted.length === 0 ? 'no_payment_link' : 'no_invoice', startedAt);
        return;
      }
      const { unfurl_id: unfurlId, source } = event;
      try {
        // Composer previews carry an unfurl_id and source instead of a real message ts.
        await client.chat.unfurl(
          unfurlId && (source === 'composer' || source === 'conversations_history')
            ? { unfurl_id: unfurlId, source, unfurls }
            : { channel: event.channel, ts: event.message_ts, unfurls },
        );
        logRequest(deps.logger, log, 'ok', startedAt, { unfurled: Object.keys(unfurls).length });
      } catch (error) {
        deps.logger.warn({ err: error }, 'chat.unfurl failed');
        logRequest(deps.logger, log, 'unfurl_failed', startedAt);
      }
    });
}
