import type { Logger } from '../../logger.js';
import type { Tracked } from '../../pipeline/tracked.js';
import { type Installations, installationIdFor } from '../../store/installations.js';
import type { InstallationId } from '../../store/keys.js';

interface RevokedDeps {
  installations: Pick<Installations, 'forgetBotToken'>;
  logger: Logger;
  /** Drops what this process keeps of the installation in memory, its token's clients first. */
  forget: (id: InstallationId) => void;
}

/**
 * `tokens_revoked`: its `tokens.bot` lists the bot users whose tokens Slack revoked (ids, not
 * tokens). The bot token is forgotten, so no call is made with it; the row (and the payment key)
 * stays until `app_uninstalled`, or until the workspace installs again. Idempotent, either order.
 */
export function tokensRevoked(deps: RevokedDeps) {
  return async (args: {
    event: { tokens?: { bot?: string[] } };
    context: { teamId?: string; enterpriseId?: string; isEnterpriseInstall?: boolean };
  }): Promise<Tracked> => {
    const { event, context } = args;
    if ((event.tokens?.bot ?? []).length === 0) return { outcome: 'ok' };
    const id = installationIdFor(context);
    if (!id) return { outcome: 'ok' };
    await deps.installations.forgetBotToken(id);
    deps.forget(id);
    deps.logger.info({ installation: id }, 'bot token revoked: forgotten');
    return { outcome: 'ok' };
  };
}
