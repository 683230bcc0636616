import type { Store } from '../../src/store/database.js';

/** What the bot's work leaves in the store: every table but the installations. */
const WORK = [
  'watches',
  'watched_invoices',
  'outbox',
  'feed_subscriptions',
  'balance_history',
  'feed_changes',
  'singletons',
  'service_state',
  'seen_events',
  'background_pace',
  'feed_settings',
  'feed_held',
  'invoices_seen',
  'invoices_paid',
] as const;

/** Empties the store of the bot's work between tests (installations stay). */
export async function emptyWork(store: Store): Promise<void> {
  for (const table of WORK) await store.db.deleteFrom(table).execute();
}
