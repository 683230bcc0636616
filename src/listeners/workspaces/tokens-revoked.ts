import type { App } from '@slack/bolt';
import type { Logger } from '../../logger.js';
import { type Installations, installationId } from '../../store/installations.js';

/**
 * `tokens_revoked`: its `tokens.bot` lists the bot users whose tokens Slack revoked (ids, not
 * tokens). The bot token is forgotten, so no call is made with it; the row (and the payment key)
 * stays until `app_uninstalled`, or until the workspace installs again. Idempotent, either order.
 */
export function registerTokensRevoked(
  app: App,
  installations: Installations,
  logger: Logger,
  /** Drops what this process keeps of the installation in memory, its token's clients first. */
  forget: (id: string) => void,
): void {
  app.event('tokens_revoked', async ({ event, context }) => {
    if ((event.tokens.bot ?? []).length === 0) return;
    const id = installationId({
      teamId: context.teamId,
      enterpriseId: context.enterpriseId,
      isEnterpriseInstall: context.isEnterpriseInstall,
    });
    if (!id) return;
    await installations.forgetBotToken(id);
    forget(id);
    logger.info({ installation: id }, 'bot token revoked: forgotten');
  });
}
