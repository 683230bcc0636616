import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../logger.js';
import type { Tracked } from '../../pipeline/tracked.js';
import { type Installations, installationIdFor } from '../../store/installations.js';
import type { InstallationId } from '../../store/keys.js';

/**
 * Waits between tries of deleting an uninstalled installation: Bolt acknowledges the event
 * before its listener runs, so Slack never sends it again; a store failing just then must not
 * leave the tokens and the key behind.
 */
const RETRY_DELAYS_MS = [500, 2000, 5000] as const;

interface UninstalledDeps {
  installations: Pick<Installations, 'uninstall'>;
  logger: Logger;
  /** Drops what this process keeps of the installation in memory (its clients, its caches). */
  forget: (id: InstallationId) => void;
  wait?: (ms: number) => Promise<unknown>;
}

/**
 * `app_uninstalled`: the workspace's installation goes, with its tokens and its payment key, and
 * everything it owns. Bolt does not authorize this event and deletes nothing by itself.
 * Idempotent: a repeat, or one after `tokens_revoked`, finds nothing left to delete; a late
 * repeat after the workspace installed again deletes nothing of the new install.
 */
export function appUninstalled(deps: UninstalledDeps) {
  const { installations, logger, forget, wait = sleep } = deps;
  return async (args: {
    body: { event_time?: number };
    context: { teamId?: string; enterpriseId?: string; isEnterpriseInstall?: boolean };
  }): Promise<Tracked> => {
    const { context } = args;
    const id = installationIdFor(context);
    if (!id) return { outcome: 'ok' };
    // Slack's event_time is in seconds: an install made after it is not what was uninstalled.
    const at = args.body.event_time === undefined ? Number.POSITIVE_INFINITY : args.body.event_time * 1000;
    for (let attempt = 0; ; attempt += 1) {
      try {
        const deleted = await installations.uninstall(id, at);
        forget(id);
        logger.info(
          { installation: id, deleted },
          deleted
            ? 'uninstalled: its tokens and payment key are deleted'
            : 'uninstalled: nothing left to delete',
        );
        return { outcome: 'ok' };
      } catch (error) {
        const delay = RETRY_DELAYS_MS[attempt];
        if (delay === undefined) {
          logger.error(
            { err: error, installation: id },
            'could not delete an uninstalled installation: its tokens and key stay until it is uninstalled again',
          );
          return { outcome: 'internal_error' };
        }
        logger.warn(
          { err: error, installation: id },
          'could not delete an uninstalled installation yet; trying again',
        );
        await wait(delay);
      }
    }
  };
}
