import type { RespondArguments } from '@slack/bolt';
import type { Logger } from '../logger.js';
import type { ResponseUrlClient } from '../slack/response-url.js';
import type { Delivery } from './outcome.js';

/** Sends Slack's acknowledgement; a failure (a closed socket, say) is logged, never thrown. */
export async function acknowledge(ack: () => Promise<void>, logger: Logger): Promise<boolean> {
  try {
    await ack();
    return true;
  } catch (error) {
    logger.error({ err: error }, 'could not acknowledge the request');
    return false;
  }
}

/**
 * Posts to the response_url (the client retries transient failures); a failure that remains
 * (an expired URL, Slack down for long) is logged, never thrown.
 */
export async function deliver(
  responseUrls: ResponseUrlClient,
  url: string,
  message: RespondArguments,
  logger: Logger,
): Promise<Delivery> {
  try {
    await responseUrls.post(url, message);
    return 'response_url';
  } catch (error) {
    logger.warn({ err: error }, 'could not post the reply to response_url');
    return 'failed';
  }
}
