import type { Installation } from '@slack/bolt';
import type { InstallationStore } from '@slack/oauth';
import type { Logger } from '../logger.js';
import { holdRefresh, releaseRefresh } from '../runner/refresh-lease.js';
import type { Store } from '../store/database.js';
import type { Installations } from '../store/installations.js';
import type { InstallationId } from '../store/keys.js';

/** A refreshed installation the store has not kept yet, and the expiry (seconds) of the token it replaces there. */
interface Unwritten {
  installation: Installation;
  storedExpiresAt: number | undefined;
}

interface UnwrittenDeps {
  store: Store;
  installations: Installations;
  /** This instance, as leases name it: it keeps the refresh lease while a token is unwritten. */
  owner: string;
  logger: Logger;
  clock: () => number;
  /** The refresh lease's length, renewed at each try of the write. */
  leaseMs: number;
  /** How long after a failed write it is tried again, request or not. */
  retryMs?: number;
}

/** A refreshed token the store could not keep is written again this often, whether requests come or not. */
const RETRY_WRITE_MS = 5_000;

/**
 * Refreshed tokens the store could not keep, by installation (issue 37). Slack revoked the
 * refresh token the store still holds when it handed the new one out, so the new one is served
 * from here, refreshed from (never the replaced one), and written again at each authorization of
 * the installation until the write holds; then the refresh lease, kept meanwhile so that no other
 * instance refreshes with the replaced token, is let go.
 */
export function unwrittenTokens(deps: UnwrittenDeps) {
  const { installations, logger } = deps;
  const unwritten = new Map<InstallationId, Unwritten>();
  /** The next try of each unwritten token's write. */
  const retries = new Map<InstallationId, NodeJS.Timeout>();

  /** Tries the write again soon, keeping the refresh lease meanwhile (both as the store allows). */
  async function retryLater(id: InstallationId): Promise<void> {
    if (!retries.has(id)) {
      const timer = setTimeout(() => {
        retries.delete(id);
        void write(id);
      }, deps.retryMs ?? RETRY_WRITE_MS);
      retries.set(id, timer.unref());
    }
    await holdRefresh(deps.store, id, deps.owner, deps.clock(), deps.leaseMs).catch(() => false);
  }

  /** Writes the token the store has not kept yet; forgets it once written or once the row changed. */
  async function write(id: InstallationId): Promise<void> {
    const kept = unwritten.get(id);
    if (!kept) return;
    try {
      if (!(await installations.storeRefreshed(kept.installation, kept.storedExpiresAt)))
        logger.warn(
          { installation: id },
          'a refreshed bot token was not kept: the installation changed meanwhile (another refresh, a revocation or an uninstall)',
        );
      unwritten.delete(id);
      clearTimeout(retries.get(id));
      retries.delete(id);
      await releaseRefresh(deps.store, id, deps.owner);
    } catch (error) {
      logger.warn(
        { err: error, installation: id },
        'a refreshed bot token could not be stored: it is used from memory and written again shortly',
      );
      await retryLater(id);
    }
  }

  return {
    write,
    /** Whether a refreshed token of the installation is still to be written. */
    has: (id: InstallationId) => unwritten.has(id),
    /** The refreshed installation not written yet, if any. */
    installationOf: (id: InstallationId) => unwritten.get(id)?.installation,
    /** When the token not written yet expires (milliseconds since the epoch), if there is one. */
    expiresAt(id: InstallationId): number | undefined {
      const seconds = unwritten.get(id)?.installation.bot?.expiresAt;
      return seconds === undefined ? undefined : seconds * 1000;
    },
    /**
     * The installation as one refresh reads and writes it: the new token is kept only over the
     * one it replaces (same expiry, not revoked, not uninstalled meanwhile), never inserted. A
     * token not written yet is the one read (its refresh token is the one Slack knows).
     */
    refreshStore(id: InstallationId): InstallationStore {
      let storedExpiresAt: number | undefined;
      return {
        async fetchInstallation(query) {
          const kept = unwritten.get(id);
          if (kept) {
            storedExpiresAt = kept.storedExpiresAt;
            return kept.installation;
          }
          const installation = await installations.fetchInstallation(query);
          storedExpiresAt = installation.bot?.expiresAt;
          return installation;
        },
        async storeInstallation(installation) {
          unwritten.set(id, { installation, storedExpiresAt });
          await write(id);
        },
      };
    },
  };
}
