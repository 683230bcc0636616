import { setTimeout as pause } from 'node:timers/promises';
import type { Authorize, AuthorizeResult, Installation } from '@slack/bolt';
import type { InstallationStore, InstallProvider } from '@slack/oauth';
import type { Logger } from '../logger.js';
import { claimRefresh, releaseRefresh } from '../runner/refresh-lease.js';
import type { Store } from '../store/database.js';
import type { InstallationSummary, Installations } from '../store/installations.js';
import type { InstallationId } from '../store/keys.js';
import { unwrittenTokens } from './unwritten-tokens.js';

/** What Bolt asks `authorize` about: the request's workspace, organisation, and whether the install is organisation-wide. */
type AuthorizeSource = Parameters<Authorize<boolean>>[0];

/** `@slack/oauth` refreshes a rotating token that expires within two hours. */
export const ROTATION_WINDOW_MS = 2 * 60 * 60_000;
/**
 * How long one instance may take over a refresh before another may try: the refresh is one
 * attempt of at most SLACK_HTTP_TIMEOUT_MS (10 s), with the store's reads and write around it.
 */
const REFRESH_LEASE_MS = 30_000;
/**
 * A token this close to its expiry is not used while another instance refreshes it: the request
 * waits for the new one. Any other waits for nobody: the token it has is good for hours yet.
 */
const NEARLY_EXPIRED_MS = 60_000;
/** How long a request waits for another instance's refresh (within Slack's 3 s), and how often it looks. */
const WAIT_FOR_REFRESH_MS = 2000;
const LOOK_EVERY_MS = 100;

interface AuthorizationDeps {
  store: Store;
  installations: Installations;
  /** A provider for one refresh over the given store (src/installations/oauth.ts `refresher`). */
  refresher: (store: InstallationStore) => InstallProvider;
  /** This instance, as leases name it. */
  owner: string;
  clock: () => number;
  logger: Logger;
  /** Waits `ms` between looks at another instance's refresh; real time unless a test counts it. */
  sleep?: (ms: number) => Promise<unknown>;
  /** How soon a refreshed token the store could not keep is written again (5 s unless a test says). */
  retryWriteMs?: number;
}

/**
 * The authorization of a request, or of background work, from its installation: its bot token,
 * refreshed first when it expires within two hours. One refresh per installation at a time, in
 * this process (concurrent requests share it) and across instances (a lease row in the store,
 * src/runner/refresh-lease.ts); no connection or transaction is held while Slack is asked. Each
 * caller then reads the installation for itself, so every request keeps its own workspace (an
 * organisation-wide install serves many).
 */
export function tokenRotation(deps: AuthorizationDeps) {
  const { store, installations, owner, clock, logger } = deps;
  const sleep = deps.sleep ?? pause;

  const unwritten = unwrittenTokens({
    store,
    installations,
    owner,
    logger,
    clock,
    leaseMs: REFRESH_LEASE_MS,
    ...(deps.retryWriteMs === undefined ? {} : { retryMs: deps.retryWriteMs }),
  });
  const refreshes = new Map<InstallationId, Promise<void>>();

  /** Whether the token in use (one not yet written, else the store's) expires within `ms`. */
  const expiresWithin = (installation: InstallationSummary, ms: number) => {
    const expiresAt = unwritten.expiresAt(installation.id) ?? installation.tokenExpiresAt;
    return expiresAt !== undefined && expiresAt - clock() < ms;
  };

  /** Waits while another instance refreshes a token about to expire, until the store holds a new one. */
  async function waitForAnother(installation: InstallationSummary): Promise<void> {
    if (!expiresWithin(installation, NEARLY_EXPIRED_MS)) return;
    for (let waited = 0; waited < WAIT_FOR_REFRESH_MS; waited += LOOK_EVERY_MS) {
      await sleep(LOOK_EVERY_MS);
      const now = await installations.summaryOf(installation.id);
      if (now?.tokenExpiresAt !== installation.tokenExpiresAt) return;
    }
  }

  async function refresh(installation: InstallationSummary, source: AuthorizeSource): Promise<void> {
    const { id } = installation;
    if (!(await claimRefresh(store, id, owner, clock(), REFRESH_LEASE_MS)))
      return waitForAnother(installation);
    try {
      // Reads the installation again, and refreshes only if nobody did meanwhile; stores the new token.
      await deps.refresher(unwritten.refreshStore(id)).authorize(source);
    } catch (error) {
      // The token it has stays good until it expires: the next request tries again.
      logger.warn({ err: error, installation: id }, 'could not refresh the installation’s bot token');
    } finally {
      // While the new token is not written, the lease stays until it runs out: no other instance
      // refreshes with the refresh token Slack has replaced meanwhile (see docs/many-workspaces.md).
      if (!unwritten.has(id)) await releaseRefresh(store, id, owner);
    }
  }

  /** One refresh of the installation's token at a time in this process. */
  function refreshOnce(installation: InstallationSummary, source: AuthorizeSource): Promise<void> {
    let running = refreshes.get(installation.id);
    if (!running) {
      running = refresh(installation, source).finally(() => refreshes.delete(installation.id));
      refreshes.set(installation.id, running);
    }
    return running;
  }

  return async function authorizationOf(
    installation: InstallationSummary,
    source: AuthorizeSource,
  ): Promise<AuthorizeResult> {
    await unwritten.write(installation.id);
    if (expiresWithin(installation, ROTATION_WINDOW_MS)) await refreshOnce(installation, source);
    const kept = unwritten.installationOf(installation.id);
    return resultOf(kept ?? (await installations.fetchInstallation(source)), source);
  };
}

/** What `@slack/oauth`'s `authorize` answers for a stored installation, without refreshing anything. */
function resultOf(installation: Installation, source: AuthorizeSource): AuthorizeResult {
  const { bot } = installation;
  return {
    teamId: installation.team?.id ?? source.teamId,
    enterpriseId: installation.enterprise?.id ?? source.enterpriseId,
    botToken: bot?.token,
    botId: bot?.id,
    botUserId: bot?.userId,
    ...(bot?.refreshToken ? { botRefreshToken: bot.refreshToken, botTokenExpiresAt: bot.expiresAt } : {}),
  };
}
