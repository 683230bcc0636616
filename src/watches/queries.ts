import type { Kysely, Selectable } from 'kysely';
import type { EndReason } from '../domain/watch.js';
import type { Store } from '../store/database.js';
import type { InstallationId } from '../store/keys.js';
import type { Tables } from '../store/schema.js';
import { type CheckValues, completeCheck } from './queries-checks.js';

export type WatchRow = Selectable<Tables['watches']>;
export type { WatchedInvoiceRow } from './queries-checks.js';

/** A watch as listed, with its invoice's last known state when it has been read. */
export type ListedWatch = WatchRow & { snapshot: string | null };

/**
 * The store's side of watching: every query the watches make, and nothing else. Each reads and
 * writes only `installation`'s rows. Claiming due checks and the counts for the metrics are
 * across installations, and another object's (`checkClaims`, ./queries-checks.ts).
 */
export function watchQueries(store: Store, installation: InstallationId): WatchQueries {
  return new WatchQueries(store, installation);
}

/** The installation's watches. */
const watches = (trx: Kysely<Tables>, installation: InstallationId) =>
  trx.selectFrom('watches').selectAll().where('installation_id', '=', installation);

/** The installation's active watches as listed, oldest first. */
const listed = (trx: Kysely<Tables>, installation: InstallationId) =>
  trx
    .selectFrom('watches')
    .leftJoin('watched_invoices', (join) =>
      join
        .onRef('watched_invoices.invoice_id', '=', 'watches.invoice_id')
        .onRef('watched_invoices.installation_id', '=', 'watches.installation_id'),
    )
    .selectAll('watches')
    .select('watched_invoices.snapshot')
    .where('watches.installation_id', '=', installation)
    .where('watches.state', '=', 'active')
    .orderBy('watches.started_at');

/**
 * Finding watches: a channel's, a person's, one by id, and an invoice's last known state. The
 * queries are methods, shared by every installation's object: made for each check, the object is
 * its store and its installation, not thirty closures.
 */
class LookupQueries {
  constructor(
    readonly store: Store,
    readonly installation: InstallationId,
  ) {}

  /** The channel's watch of an invoice that has not ended, active or pending, if any. */
  current(channelId: string, invoiceId: string) {
    return watches(this.store.db, this.installation)
      .where('channel_id', '=', channelId)
      .where('invoice_id', '=', invoiceId)
      .where('state', '!=', 'ended')
      .executeTakeFirst();
  }

  /** The channel's watches that count against its limit: active, and pending (being started). */
  async countActive(channelId: string) {
    const { n } = await this.store.db
      .selectFrom('watches')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('installation_id', '=', this.installation)
      .where('channel_id', '=', channelId)
      .where('state', '!=', 'ended')
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  /** The invoice's watches that have a card (active or ended), oldest first. */
  ofInvoice(invoiceId: string) {
    return watches(this.store.db, this.installation)
      .where('invoice_id', '=', invoiceId)
      .where('state', '!=', 'pending')
      .orderBy('started_at')
      .execute();
  }

  /** A watch of this this.installation by id (a Stop button's value): another this.installation's is none. */
  byId(id: string) {
    return watches(this.store.db, this.installation).where('id', '=', id).executeTakeFirst();
  }

  /** The invoice as last seen, as JSON, if it is still watched. */
  async lastSnapshot(trx: Kysely<Tables>, invoiceId: string) {
    return (
      await trx
        .selectFrom('watched_invoices')
        .select('snapshot')
        .where('installation_id', '=', this.installation)
        .where('invoice_id', '=', invoiceId)
        .executeTakeFirst()
    )?.snapshot;
  }

  /** The channel's active watches, oldest first. */
  listInChannel(channelId: string): Promise<ListedWatch[]> {
    return listed(this.store.db, this.installation).where('watches.channel_id', '=', channelId).execute();
  }

  /** The active watches a person started in a workspace, oldest first. */
  listStartedBy(teamId: string, userId: string): Promise<ListedWatch[]> {
    return listed(this.store.db, this.installation)
      .where('watches.team_id', '=', teamId)
      .where('watches.watcher_id', '=', userId)
      .execute();
  }
}

/** Starting a watch: stored pending, made active with its card, or dropped when its card is not in Slack. */
class StartQueries extends LookupQueries {
  /**
   * Stores a new watch (a pending one, before its card is posted) and, if no other watch polls
   * its invoice yet, the invoice to poll. An invoice already polled has its row locked until
   * the transaction ends (a no-op update): a Stop of another channel's watch of it
   * (`forgetIfUnwatched`) then waits for this watch, and keeps the invoice polled for it.
   */
  async insert(
    trx: Kysely<Tables>,
    watch: Omit<WatchRow, 'installation_id'>,
    snapshot: string,
    nextPollAt: number,
  ): Promise<void> {
    await trx
      .insertInto('watches')
      .values({ ...watch, installation_id: this.installation })
      .execute();
    await trx
      .insertInto('watched_invoices')
      .values({
        installation_id: this.installation,
        invoice_id: watch.invoice_id,
        snapshot,
        watched_since: watch.started_at,
        next_poll_at: nextPollAt,
        failures: 0,
        failing_since: null,
      })
      .onConflict((oc) =>
        oc
          .columns(['installation_id', 'invoice_id'])
          .doUpdateSet({ invoice_id: (eb) => eb.ref('excluded.invoice_id') }),
      )
      .execute();
  }

  /** A check read the invoice with the key that replaced another (`account_replaced`). */
  readByNewAccount(trx: Kysely<Tables>, invoiceId: string) {
    return trx
      .updateTable('watched_invoices')
      .set({ account_replaced: 0 })
      .where('installation_id', '=', this.installation)
      .where('invoice_id', '=', invoiceId)
      .execute();
  }

  /** Makes a pending watch active with its card; false when it is no longer pending. */
  async activate(trx: Kysely<Tables>, id: string, card: Pick<WatchRow, 'card_ts' | 'thread_ts'>) {
    const result = await trx
      .updateTable('watches')
      .set({ state: 'active', card_ts: card.card_ts, thread_ts: card.thread_ts })
      .where('installation_id', '=', this.installation)
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Forgets a pending watch whose card is known not to be in Slack; false when it is no longer pending. */
  async drop(trx: Kysely<Tables>, id: string): Promise<boolean> {
    const result = await trx
      .deleteFrom('watches')
      .where('installation_id', '=', this.installation)
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** The invoice's watches pending since `before` or earlier: their start did not finish. */
  pendingSince(invoiceId: string, before: number) {
    return watches(this.store.db, this.installation)
      .where('invoice_id', '=', invoiceId)
      .where('state', '=', 'pending')
      .where('started_at', '<=', before)
      .execute();
  }
}

/** Ending watches: one by one, or an invoice's, and forgetting the invoice once nobody watches it. */
class EndQueries extends StartQueries {
  /**
   * Ends a watch, active or pending (its card being posted: its start then tells the card why,
   * src/watches/start.ts); false when it had already ended.
   */
  async end(trx: Kysely<Tables>, id: string, reason: EndReason, now: number): Promise<boolean> {
    const result = await trx
      .updateTable('watches')
      .set({ state: 'ended', ended_at: now, end_reason: reason })
      .where('installation_id', '=', this.installation)
      .where('id', '=', id)
      .where('state', '!=', 'ended')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * Ends every watch of the this.installation that has not ended, active or pending (its card being
   * posted), and resolves with them as they were. They are locked first in the order of their
   * ids (PostgreSQL), the order a check locks its invoice's watches in, so the two never wait
   * for each other in a circle.
   */
  async endAll(trx: Kysely<Tables>, reason: EndReason, now: number): Promise<WatchRow[]> {
    const current = await watches(trx, this.installation)
      .where('state', '!=', 'ended')
      .orderBy('id')
      .$if(this.store.dialect === 'postgres', (q) => q.forUpdate())
      .execute();
    if (current.length === 0) return [];
    // Only the watches read (and locked) above: one a start commits meanwhile is not ended
    // without its invoice being let go with the others'.
    await trx
      .updateTable('watches')
      .set({ state: 'ended', ended_at: now, end_reason: reason })
      .where('installation_id', '=', this.installation)
      .where(
        'id',
        'in',
        current.map((w) => w.id),
      )
      .execute();
    return current;
  }

  /** The invoice's active watches, in the order of their ids (the order they are locked in). */
  activeOfInvoice(trx: Kysely<Tables>, invoiceId: string) {
    return watches(trx, this.installation)
      .where('invoice_id', '=', invoiceId)
      .where('state', '=', 'active')
      .orderBy('id')
      .execute();
  }

  /**
   * Gives a watch that ended while its card was being posted (pending, `endAll`) that card, so
   * its end can be told there; false when it has one already or has not ended.
   */
  async placeEndedCard(trx: Kysely<Tables>, id: string, card: Pick<WatchRow, 'card_ts' | 'thread_ts'>) {
    const result = await trx
      .updateTable('watches')
      .set({ card_ts: card.card_ts, thread_ts: card.thread_ts })
      .where('installation_id', '=', this.installation)
      .where('id', '=', id)
      .where('state', '=', 'ended')
      .where('card_ts', '=', '')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * Of these watches, the ones still active, locked until the transaction ends (PostgreSQL; on
   * SQLite the transaction holds the write lock): one a Stop ended since they were read is
   * left out, and a Stop that comes now waits for the transaction.
   */
  async holdActive(trx: Kysely<Tables>, ids: readonly string[]) {
    return ids.length === 0
      ? []
      : watches(trx, this.installation)
          .where('id', 'in', ids)
          .where('state', '=', 'active')
          .orderBy('id')
          .$if(this.store.dialect === 'postgres', (q) => q.forUpdate())
          .execute();
  }

  /**
   * Stops polling an invoice nobody watches any more (a pending watch still does); true when it
   * did. The invoice's row is locked first (PostgreSQL), then its watches are read by a
   * statement of their own, which sees a start that locked the row and committed meanwhile
   * (`insert`): one statement would judge by what it saw before it waited, and forget the
   * invoice of a watch just started.
   */
  async forgetIfUnwatched(trx: Kysely<Tables>, invoiceId: string): Promise<boolean> {
    const polled = await trx
      .selectFrom('watched_invoices')
      .select('invoice_id')
      .where('installation_id', '=', this.installation)
      .where('invoice_id', '=', invoiceId)
      .$if(this.store.dialect === 'postgres', (q) => q.forUpdate())
      .executeTakeFirst();
    if (!polled) return false;
    const watched = await watches(trx, this.installation)
      .where('invoice_id', '=', invoiceId)
      .where('state', '!=', 'ended')
      .executeTakeFirst();
    if (watched) return false;
    await trx
      .deleteFrom('watched_invoices')
      .where('installation_id', '=', this.installation)
      .where('invoice_id', '=', invoiceId)
      .execute();
    return true;
  }
}

/** Every query of one installation's watches, and a check's record. */
class WatchQueries extends EndQueries {
  /** Records a check and releases its lease, only while `owner` still holds it (`completeCheck`). */
  complete(trx: Kysely<Tables>, owner: string, invoiceId: string, values: CheckValues): Promise<boolean> {
    return completeCheck(trx, this.installation, owner, invoiceId, values);
  }
}
