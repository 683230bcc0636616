import type { Kysely } from 'kysely';
import type { OutgoingEntry } from '../outbox.js';
import type { InstallationId } from '../store/keys.js';
import type { Tables } from '../store/schema.js';
import { type WatchDeps, watchContext } from './context.js';

/**
 * Ends every watch of an installation whose payment account was disconnected, in the
 * disconnect's own transaction: nothing can read its invoices any more. Active ones and pending
 * ones (their card being posted) alike: each card says the watch ended and why, each thread is
 * told once (through the outbox; a pending watch's card is told when its start places it), and
 * its invoices are no longer polled. Resolves with how many watches it ended.
 */
export async function endWatchesOfAccount(
  trx: Kysely<Tables>,
  deps: Pick<WatchDeps, 'store' | 'settings'> & { installation: InstallationId },
  now: number,
): Promise<number> {
  const ctx = watchContext(deps);
  const ended = await ctx.queries.endAll(trx, 'account_disconnected', now);
  const outgoing: OutgoingEntry[] = [];
  for (const invoiceId of new Set(ended.map((w) => w.invoice_id))) {
    const invoice = await ctx.lastSeen(trx, invoiceId);
    for (const w of ended) {
      if (invoice && w.invoice_id === invoiceId && w.card_ts !== '')
        outgoing.push(...ctx.endingMessages(w, invoice, 'account_disconnected', now));
    }
    await ctx.queries.forgetIfUnwatched(trx, invoiceId);
  }
  await ctx.send(trx, outgoing, now);
  return ended.length;
}
