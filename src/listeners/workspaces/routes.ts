import type { SlackEventMiddlewareArgs } from '@slack/bolt';
import { eventListener } from '../../pipeline/kinds.js';
import type { Tracked, TrackingDeps } from '../../pipeline/tracked.js';
import type { Installations } from '../../store/installations.js';
import type { InstallationId } from '../../store/keys.js';
import type { MoreRoutes } from '../index.js';
import type { Route } from '../router.js';
import { appUninstalled } from './app-uninstalled.js';
import { type PaymentAccountDeps, paymentAccountRoutes } from './payment-account.js';
import { tokensRevoked } from './tokens-revoked.js';

/** The events many workspaces' installations need (the manifest's `--mode many` subscribes to them). */
export const WORKSPACE_EVENTS = ['app_uninstalled', 'tokens_revoked'] as const;

interface WorkspaceRoutesDeps extends TrackingDeps, PaymentAccountDeps {
  installations: Installations;
  /** Drops what this process keeps of an installation in memory. */
  forget: (id: InstallationId) => void;
}

/**
 * What many workspaces route besides each installation's own handlers: the payment account
 * (Home tab buttons, the modal) and the install's lifecycle (Bolt does not authorize these
 * events: the context names the workspace, and nothing else is read).
 */
export function workspaceRoutes(deps: WorkspaceRoutesDeps): MoreRoutes {
  // Their handlers read only the event and the context Bolt gives every request.
  const event = <A>(name: string, handle: (args: A) => Promise<Tracked>) =>
    eventListener(
      deps,
      name,
      handle as unknown as (args: SlackEventMiddlewareArgs) => Promise<Tracked>,
    ) as Route;
  const lifecycle: Record<(typeof WORKSPACE_EVENTS)[number], Route> = {
    app_uninstalled: event('app_uninstalled', appUninstalled(deps)),
    tokens_revoked: event('tokens_revoked', tokensRevoked(deps)),
  };
  return {
    ...paymentAccountRoutes(deps),
    ...Object.fromEntries(WORKSPACE_EVENTS.map((e) => [`event ${e}`, lifecycle[e]])),
  };
}
