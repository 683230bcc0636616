import { type Installation, webApi } from '@slack/bolt';
import oauth from '@slack/oauth';
import { tokenRotation } from '../../src/installations/authorization.js';
import { boltLogger, createLogger, type Logger } from '../../src/logger.js';
import type { Store } from '../../src/store/database.js';
import { createInstallations, type Installations } from '../../src/store/installations.js';
import { createSealer } from '../../src/store/sealing.js';
import { KEY } from './installations-contract.js';
import { type SlackStandIn, startSlackStandIn } from './slack-stand-in.js';

/**
 * Installations with rotating tokens, installed through the Slack stand-in's `oauth.v2.access`
 * (so that it knows their refresh tokens), and the bot's token rotation over them as each
 * instance runs it: a store of its own, its own `@slack/oauth` InstallProvider.
 */

export const CLIENT = { id: '1111.2222', secret: 'rotation-client-secret-8d7c6b' };

export const startRotationSlack = () =>
  startSlackStandIn({
    teamId: 'T0HOME',
    botToken: 'xoxb-home',
    clientId: CLIENT.id,
    clientSecret: CLIENT.secret,
  });

/** What `oauth.v2.access` gave for a code, as `@slack/oauth` stores it. */
function installationOf(answer: Record<string, unknown>, now: number): Installation {
  const team = answer.team as { id: string } | null;
  const enterprise = answer.enterprise as { id: string } | null;
  return {
    team: team ?? undefined,
    enterprise: enterprise ?? undefined,
    isEnterpriseInstall: answer.is_enterprise_install === true,
    appId: 'A0APP',
    user: { id: (answer.authed_user as { id: string }).id, token: undefined, scopes: undefined },
    bot: {
      token: String(answer.access_token),
      refreshToken: String(answer.refresh_token),
      expiresAt: Math.floor(now / 1000) + Number(answer.expires_in),
      scopes: ['commands'],
      id: 'B0BOT',
      userId: String(answer.bot_user_id),
    },
    tokenType: 'bot',
    authVersion: 'v2',
  } as Installation;
}

/**
 * Installs `id` with a token that expires in `expiresIn` seconds: within the two hours before
 * expiry in which the bot refreshes it. `org`: an organisation-wide install.
 */
export async function installRotating(
  slack: SlackStandIn,
  installations: Installations,
  id: string,
  options: { org?: boolean; expiresIn?: number } = {},
): Promise<void> {
  const code = `code-${id}`;
  slack.oauthCodes.set(code, {
    access_token: `xoxe.xoxb-${id}-first-token`,
    refresh_token: `xoxe-1-${id}-first-refresh`,
    expires_in: options.expiresIn ?? 60,
    scope: 'commands',
    bot_user_id: 'U0BOT',
    team: options.org ? null : { id },
    enterprise: options.org ? { id } : null,
    is_enterprise_install: options.org === true,
    authed_user: { id: `U0${id}ADMIN` },
  });
  const answer = await new webApi.WebClient(undefined, { slackApiUrl: slack.apiUrl }).oauth.v2.access({
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    code,
  });
  await installations.storeInstallation(
    installationOf(answer as unknown as Record<string, unknown>, Date.now()),
  );
}

/** What a test may set of one instance's token rotation: its log, clock and waits, and what it sees of the store. */
export interface RotationOptions {
  logger?: Logger;
  clock?: () => number;
  sleep?: (ms: number) => Promise<unknown>;
  /** How soon a token the store could not keep is written again. */
  retryWriteMs?: number;
  /** Changes what the rotation sees of the store's installations. */
  installations?: (real: Installations) => Installations;
}

/** One instance's view: its installations over `store`, and its token rotation (`owner` names it in leases). */
export function rotationInstance(
  store: Store,
  slack: SlackStandIn,
  owner: string,
  options: RotationOptions = {},
) {
  const logger = options.logger ?? createLogger({ level: 'silent', secrets: [] });
  const installations = createInstallations(store, createSealer({ current: KEY }), Date.now);
  const refresher = (installationStore: oauth.InstallationStore) =>
    new oauth.InstallProvider({
      clientId: CLIENT.id,
      clientSecret: CLIENT.secret,
      stateVerification: false,
      installationStore,
      clientOptions: { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } },
      logger: boltLogger(logger),
    });
  const authorizationOf = tokenRotation({
    store,
    installations: options.installations ? options.installations(installations) : installations,
    refresher,
    owner,
    clock: options.clock ?? Date.now,
    logger,
    ...(options.sleep ? { sleep: options.sleep } : {}),
    ...(options.retryWriteMs === undefined ? {} : { retryWriteMs: options.retryWriteMs }),
  });
  return { installations, authorizationOf };
}

/** How many times Slack was asked to refresh each refresh token. */
export function refreshesByToken(slack: SlackStandIn): Map<string, number> {
  const counts = new Map<string, number>();
  for (const call of slack.calls)
    if (call.args.grant_type === 'refresh_token') {
      const token = String(call.args.refresh_token);
      counts.set(token, (counts.get(token) ?? 0) + 1);
    }
  return counts;
}
