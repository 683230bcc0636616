/** The fields whose change is announced: the two states, and what the customer is asked to pay and when. */
export type WatchedField = 'status' | 'payStatus' | 'amount' | 'timeout' | 'methods';

export interface Change {
  field: WatchedField;
  before: string;
  after: string;
}

/**
 * Why a watch ended, as the store keeps it. `final`: the invoice no longer awaits payment
 * (`awaitsPayment` in src/domain/invoice.ts), so nothing more is expected to change.
 */
export type EndReason =
  | 'stopped'
  | 'not_found'
  | 'final'
  | 'expired'
  | 'max_days'
  | 'card_deleted'
  | 'not_in_channel'
  /** Many workspaces: the payment account whose key checked it was disconnected. */
  | 'account_disconnected'
  /** Many workspaces: the key was replaced by one whose account does not know the invoice. */
  | 'account_replaced';
