import type { BalancePolicy } from '../access.js';
import type { Inflight } from '../inflight.js';
import type { Logger } from '../logger.js';
import type { PaymentsClient } from '../payments/index.js';

export type Visibility = 'ephemeral' | 'in_channel';

/** What every listener is given: built once at start, nothing read from the environment here. */
export interface ListenerDeps {
  payments: PaymentsClient;
  logger: Logger;
  inflight: Inflight;
  clock: () => Date;
  /** How long a command waits for the service before acknowledging and answering via response_url. */
  fastPathMs: number;
  invoiceReply: Visibility;
  payUrl: URL | undefined;
  balancePolicy: BalancePolicy;
}
