import { eventBody } from './slack-requests.js';

/**
 * Requests of one workspace of many (many-workspaces mode), as Slack sends them: the Events API
 * callbacks, Home tab clicks and modal submissions that name their workspace, and the install
 * page's Add to Slack link. Pure builders, shared by the unit suite (test/support/workspaces-bot.ts)
 * and the end-to-end one (test/e2e/workspaces.test.ts).
 */

/** What a request needs of its workspace: its team (its installation's id). */
export interface TeamOf {
  team: string;
}

/** A request body built for the one-workspace tests, moved into workspace `w` (its team, its authorization). */
export function inWorkspace(body: string, w: TeamOf): string {
  if (body.startsWith('payload=')) {
    const payload = JSON.parse(decodeURIComponent(body.slice('payload='.length)));
    payload.team = { id: w.team, domain: w.team.toLowerCase() };
    payload.user.team_id = w.team;
    return `payload=${encodeURIComponent(JSON.stringify(payload))}`;
  }
  const json = JSON.parse(body);
  return JSON.stringify({
    ...json,
    team_id: w.team,
    authorizations: [{ team_id: w.team, is_bot: true, is_enterprise_install: false }],
  });
}

/** An Events API callback of workspace `w`; `eventTime` (seconds) is when Slack says it happened, now by default. */
export function workspaceEventBody(
  w: TeamOf,
  event: Record<string, unknown>,
  opts: { eventTime?: number } = {},
): string {
  const body = JSON.parse(inWorkspace(eventBody(event), w)) as Record<string, unknown>;
  return JSON.stringify(opts.eventTime === undefined ? body : { ...body, event_time: opts.eventTime });
}

/**
 * A click on a button of the App Home (`connect_payment_account`, `disconnect_payment_account`):
 * a Home tab click carries no response_url; one on a message does.
 */
export function homeClickBody(
  w: TeamOf,
  user: string,
  actionId: string,
  opts: { responseUrl?: string; triggerId?: string } = {},
): string {
  const click = {
    type: 'block_actions',
    team: { id: w.team, domain: w.team.toLowerCase() },
    user: { id: user, team_id: w.team },
    api_app_id: 'A0APP',
    token: 'deprecated-verification-token',
    trigger_id: opts.triggerId ?? `1.2.${actionId}`,
    container: { type: 'view', view_id: 'V0HOME' },
    view: { id: 'V0HOME', type: 'home', team_id: w.team },
    actions: [{ type: 'button', action_id: actionId, block_id: 'payment_account', action_ts: '1' }],
    enterprise: null,
    is_enterprise_install: false,
    ...(opts.responseUrl === undefined ? {} : { response_url: opts.responseUrl }),
  };
  return `payload=${encodeURIComponent(JSON.stringify(click))}`;
}

/** The payment account modal's submission with `apiKey` typed in; `null` submits a state without the input. */
export function keySubmissionBody(w: TeamOf, user: string, apiKey: string | null): string {
  const values = apiKey === null ? {} : { api_key: { api_key: { type: 'plain_text_input', value: apiKey } } };
  const payload = {
    type: 'view_submission',
    team: { id: w.team, domain: w.team.toLowerCase() },
    user: { id: user, team_id: w.team },
    api_app_id: 'A0APP',
    token: 'deprecated-verification-token',
    trigger_id: '1.2.submit',
    view: {
      id: 'V1',
      type: 'modal',
      team_id: w.team,
      callback_id: 'payment_account',
      private_metadata: '',
      hash: 'h',
      state: { values },
    },
    enterprise: null,
    is_enterprise_install: false,
  };
  return `payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

/** The Add to Slack link of the install page (`GET /slack/install`), as a browser follows it. */
export function addToSlackLink(html: string): URL | undefined {
  const href = /id="add-to-slack" href="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
  return href === undefined ? undefined : new URL(href);
}
