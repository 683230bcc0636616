import type { BalancePolicy } from '../access.js';
import type { PaymentsClient } from '../payments/index.js';
import type { AckRaceDeps } from '../pipeline/ack-race.js';
import type { Visibility } from '../pipeline/outcome.js';

/** What every listener is given: built once at start, nothing read from the environment here. */
export interface ListenerDeps extends AckRaceDeps {
  payments: PaymentsClient;
  clock: () => Date;
  invoiceReply: Visibility;
  payUrl: URL | undefined;
  balancePolicy: BalancePolicy;
}
