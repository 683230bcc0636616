import type { App } from '@slack/bolt';
import type { Logger } from '../../logger.js';
import { type Installations, installationId } from '../../store/installations.js';

/**
 * `app_uninstalled`: the workspace's installation goes, with its tokens and its payment key.
 * Bolt does not authorize this event and deletes nothing by itself. Idempotent: a repeat, or
 * one after `tokens_revoked`, finds nothing left to delete.
 */
export function registerAppUninstalled(
  app: App,
  installations: Installations,
  logger: Logger,
  /** Drops what this process keeps of the installation in memory (its clients, its caches). */
  forget: (id: string) => void,
): void {
  app.event('app_uninstalled', async ({ context }) => {
    const query = {
      teamId: context.teamId,
      enterpriseId: context.enterpriseId,
      isEnterpriseInstall: context.isEnterpriseInstall,
    };
    await installations.deleteInstallation(query);
    const id = installationId(query);
    if (id) forget(id);
    logger.info({ installation: id }, 'uninstalled: its tokens and payment key are deleted');
  });
}
