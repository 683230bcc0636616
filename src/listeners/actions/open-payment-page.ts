import type { SlackActionMiddlewareArgs } from '@slack/bolt';

/** A URL button still sends a click to the app; Slack expects it acknowledged, nothing more. */
export async function acknowledgeOpenPaymentPage({
  ack,
}: Pick<SlackActionMiddlewareArgs, 'ack'>): Promise<void> {
  await ack();
}
