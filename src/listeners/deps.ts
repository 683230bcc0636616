import type { BalancePolicy } from '../access.js';
import type { Feed } from '../feed/service.js';
import type { Health, PaymentsClient } from '../payments/index.js';
import type { AckRaceDeps } from '../pipeline/ack-race.js';
import type { Visibility } from '../pipeline/outcome.js';
import type { SlackPoster } from '../slack/poster.js';
import type { Watches } from '../watches/service.js';

/** What every listener is given: built once at start, nothing read from the environment here. */
export interface ListenerDeps extends AckRaceDeps {
  payments: PaymentsClient;
  clock: () => Date;
  invoiceReply: Visibility;
  payUrl: URL | undefined;
  balancePolicy: BalancePolicy;
  watches: Watches;
  feed: Feed;
  /** The bot's own posts (the shortcut's Share in thread). */
  poster: SlackPoster;
  /** The payment service as this instance has seen it, for the App Home. */
  health: Health;
  /** Since when the payment service has rejected the key, as all instances know it. */
  keyRejectedSince: () => Promise<number | undefined>;
  /** For help texts that state the limits. */
  maxWatchDays: number;
  /** True the first time a key (an event id) is seen by any instance: Slack retries events. */
  firstSight: (key: string) => Promise<boolean>;
}
