import type { Logger } from '../logger.js';
import type { OutboxRow } from '../outbox.js';
import type { Tracked } from '../pipeline/tracked.js';
import { rejectedAmong, serviceState } from '../service-state.js';
import type { SlackPostError } from '../slack/calls.js';
import type { Store } from '../store/database.js';
import type { InstallationSummary } from '../store/installations.js';
import { type InstallationId, ONE_WORKSPACE } from '../store/keys.js';
import { endWatchesOfAccount } from '../watches/account.js';
import type { WatchSettings } from '../watches/context.js';
import type { WatchChecker } from '../watches/poll-job.js';
import { watchQueries } from '../watches/queries.js';
import type { Tenancy } from './tenancy.js';

/**
 * What the background jobs ask of an installation, whichever the tenancy: its watches, feeds and
 * bot, or nothing while it cannot be served now (the scheduler then postpones its work).
 */
export function backgroundParts(
  tenancy: Pick<Tenancy, 'partOf' | 'summariesOf'>,
  deps: {
    store: Store;
    logger: Logger;
    clock: () => number;
    settings: { watches: WatchSettings };
    wakeOutbox?: (() => void) | undefined;
  },
) {
  /**
   * Whether an installation's background work may call the service now: while the service
   * rejects its key, one check or reading a minute, all instances together; the rest wait
   * ("cannot be served now") without a call.
   */
  async function mayCall(id: InstallationId): Promise<boolean> {
    return (
      (await unlessFailing(id, () =>
        serviceState(deps.store, deps.logger, { installation: id }).mayProbe(deps.clock()),
      )) ?? false
    );
  }

  /**
   * What an installation's background work is lent, or undefined (it cannot be served now) when
   * making it failed: one installation that cannot be read (its sealed token or key not opening,
   * say) is logged and left out, never the others of the same claim.
   */
  async function unlessFailing<P>(id: InstallationId, make: () => Promise<P>): Promise<P | undefined> {
    try {
      return await make();
    } catch (error) {
      const who = id === ONE_WORKSPACE ? {} : { installation: id };
      deps.logger.warn({ err: error, ...who }, 'could not serve an installation’s background work');
      return undefined;
    }
  }

  /**
   * The watches of an installation whose payment account is not connected (a start whose watch
   * was written after the Disconnect had ended the others): a check ends them all, as the
   * Disconnect did, rather than wait on an account that is gone.
   */
  const unconnected = (installation: InstallationId) => ({
    async check(row: { invoice_id: string }): Promise<Tracked> {
      const { store, settings, clock } = deps;
      const watchDeps = { store, settings: settings.watches, installation };
      await store.transaction(async (trx) => {
        await endWatchesOfAccount(trx, watchDeps, clock());
        // The claimed invoice too, when no watch of it was left to end: polled for nobody.
        await watchQueries(store, installation).forgetIfUnwatched(trx, row.invoice_id);
      });
      deps.wakeOutbox?.();
      return { outcome: 'not_connected' };
    },
  });

  /**
   * An installation's watches as it is now (unconnected: they end at their check); undefined when
   * it cannot be served. `known`: its summary as a claim's one read found it.
   */
  async function watchesNow(id: InstallationId, known?: InstallationSummary) {
    const part = await tenancy.partOf(id, known);
    return part && !part.checker ? unconnected(id) : part?.checker;
  }

  return {
    /**
     * The watches of a claim's installations, for the poll job, one left out while it cannot be
     * served: one read says whose keys are rejected (many workspaces: the read of their
     * summaries), and only those ask for their probe.
     */
    async checkersOf(ids: readonly InstallationId[]): Promise<ReadonlyMap<InstallationId, WatchChecker>> {
      const known = await tenancy.summariesOf?.(ids);
      const rejected = known
        ? new Set(ids.filter((id) => known.get(id)?.keyRejected))
        : await rejectedAmong(deps.store, ids);
      const checkers = new Map<InstallationId, WatchChecker>();
      await Promise.all(
        ids.map(async (id) => {
          const keyRejected = rejected.has(id);
          // A rejected key's checks wait for its probe; the claim's read of the summary serves either way.
          const watches =
            keyRejected && !(await mayCall(id))
              ? undefined
              : await unlessFailing(id, () => watchesNow(id, known?.get(id)));
          if (watches) checkers.set(id, { check: (row) => watches.check(row, { keyRejected }) });
        }),
      );
      return checkers;
    },

    /** An installation's feeds, for their balance poll; undefined while it cannot be served. */
    feedOf: async (id: InstallationId) =>
      (await mayCall(id)) ? (await tenancy.partOf(id))?.feed : undefined,

    /**
     * An installation's feeds, for their digests: a digest reads only what the store holds, so it
     * goes out while the service rejects the key, without spending the minute's probe.
     */
    digestsOf: async (id: InstallationId) => (await tenancy.partOf(id))?.feed,

    /** An installation's bot, for the outbox; undefined while it cannot be served. */
    posterOf: async (id: InstallationId) => (await tenancy.partOf(id))?.poster,

    /**
     * Whether a message may still go out (asked by the outbox just before): a feed's message only
     * while its feed runs and its channel may still receive it; a message of an installation that
     * cannot be served now is left for the outbox to postpone, and one of a feed whose account
     * was disconnected since is not sent.
     */
    async mayDeliver(row: OutboxRow): Promise<boolean> {
      if (!row.subscription_id) return true;
      const tenant = await tenancy.partOf(row.installation_id);
      if (!tenant) return true;
      return tenant.feed ? tenant.feed.mayDeliver(row) : false;
    },

    /** A message Slack will never take ends its watch (a deleted card, a channel closed to the bot). */
    async undeliverable(row: OutboxRow, error: SlackPostError): Promise<void> {
      await (await tenancy.partOf(row.installation_id))?.watches?.undeliverable(row, error);
    },
  };
}
