/**
 * Socket Mode opens its WebSocket at the URL `apps.connections.open` gives for the app-level token
 * (docs/slack.md#socket-mode). @slack/socket-mode calls it and retries on its own, forever for
 * most refusals and without saying which; what Slack answered is seen here, on the way back.
 */

/**
 * Answers of `apps.connections.open` that say the app-level token itself is wrong (revoked, of
 * another kind, without connections:write, its workspace gone): no retry can change them.
 * Anything else (Slack's own trouble, a rate limit) may pass.
 */
const TOKEN_REFUSALS: ReadonlySet<string> = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'not_allowed_token_type',
  'missing_scope',
  'no_permission',
  'user_removed_from_team',
  'team_disabled',
  'access_denied',
]);

/** Whether Slack's answer to `apps.connections.open` refuses the token for good. */
export const refusesToken = (error: string): boolean => TOKEN_REFUSALS.has(error);

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A fetch for Socket Mode's Web API client (its `clientOptions.fetch`) that tells `onRefused`
 * each error code Slack answers `apps.connections.open` with; every answer goes on unchanged.
 */
export function watchingConnectionsOpen(onRefused: (error: string) => void, base: Fetch = fetch): Fetch {
  return async (url, init) => {
    const response = await base(url, init);
    if (new URL(url).pathname.endsWith('/apps.connections.open')) {
      const body = (await response
        .clone()
        .json()
        .catch(() => undefined)) as { ok?: unknown; error?: unknown } | undefined;
      if (body?.ok === false && typeof body.error === 'string') onRefused(body.error);
    }
    return response;
  };
}
