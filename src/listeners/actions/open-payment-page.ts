import type { SlackActionMiddlewareArgs } from '@slack/bolt';
import type { Tracked } from '../../pipeline/tracked.js';

/** A URL button still sends a click to the app; Slack expects it acknowledged, nothing more. */
export async function acknowledgeOpenPaymentPage({
  ack,
}: Pick<SlackActionMiddlewareArgs, 'ack'>): Promise<Tracked> {
  await ack();
  return { outcome: 'ok' };
}
