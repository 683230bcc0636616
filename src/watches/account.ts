import type { Kysely } from 'kysely';
import type { Tables } from '../store/schema.js';
import { type WatchDeps, watchContext } from './context.js';

/**
 * Ends every active watch of an installation whose payment account was disconnected, in the
 * disconnect's own transaction: nothing can read its invoices any more, so each card says the
 * watch ended and why, each thread is told once (through the outbox), and its invoices are no
 * longer polled. Resolves with how many watches it ended.
 */
export async function endWatchesOfAccount(
  trx: Kysely<Tables>,
  deps: Pick<WatchDeps, 'store' | 'settings'> & { installation: string },
  now: number,
): Promise<number> {
  const ctx = watchContext(deps);
  let ended = 0;
  for (const w of await ctx.queries.allActive(trx)) {
    if (!(await ctx.queries.end(trx, w.id, 'account_disconnected', now))) continue;
    ended += 1;
    const invoice = await ctx.lastSeen(trx, w.invoice_id);
    if (invoice) await ctx.send(trx, ctx.endingMessages(w, invoice, 'account_disconnected', now), now);
    await ctx.queries.forgetIfUnwatched(trx, w.invoice_id);
  }
  return ended;
}
