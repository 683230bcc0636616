import { type Mrkdwn, md } from './mrkdwn.js';

/**
 * Where the bot's payment API key comes from, so that what people are told to fix is what exists
 * in the mode it runs in: the operator's `PAYMENT_API_KEY` (one workspace), or the account a
 * workspace connected on the app's Home tab (many workspaces).
 */
export type KeySource = 'configuration' | 'workspace';

/** Who fixes a rejected key, and how: the end of a sentence ("… until <this>"). */
export const keyFix = (source: KeySource): Mrkdwn =>
  source === 'configuration'
    ? md`an admin fixes \`PAYMENT_API_KEY\``
    : md`whoever manages the payment account replaces the key on the app’s *Home* tab`;
