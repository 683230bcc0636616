import type { App } from '@slack/bolt';
import type { InstallationId } from '../store/keys.js';

/**
 * Bolt keeps a Web API client for every team and bot token it has served a request with, for
 * as long as the process runs (`App.clients`, a pool per team keyed by token): every rotated
 * token, reinstall and workspace of an organisation-wide install adds one, and an uninstalled
 * workspace's token stays in memory. This keeps one pool per team, made again when the team's
 * token changes, at most `max` teams, and none of an installation that was forgotten.
 */
export function boltClients(app: App, max: number) {
  const pools = (app as unknown as { clients: Record<string, unknown> }).clients;
  /** Each team's (or organisation's) token and installation, as Bolt's pools have them. */
  const seen = new Map<string, { token: string; installation: InstallationId }>();

  const drop = (key: string) => {
    seen.delete(key);
    delete pools[key];
  };

  return {
    /** After a request's authorization: its team's pool is the one of its token now. */
    served(key: string | undefined, token: string | undefined, installation: InstallationId) {
      if (key === undefined || token === undefined) return;
      const before = seen.get(key);
      if (before && before.token !== token) drop(key);
      seen.delete(key);
      seen.set(key, { token, installation });
      while (seen.size > max) drop(seen.keys().next().value as string);
    },
    /** An installation uninstalled or its token revoked: Bolt keeps no client of it. */
    forget(installation: InstallationId) {
      for (const [key, entry] of seen) if (entry.installation === installation) drop(key);
    },
    /** Teams whose pools Bolt keeps, for the tests. */
    get size() {
      return Object.keys(pools).length;
    },
  };
}
