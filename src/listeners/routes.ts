import type { SlackEventMiddlewareArgs } from '@slack/bolt';
import {
  ACTION_CONNECT,
  ACTION_DISCONNECT,
  ACTION_ENTITY_REFRESH,
  ACTION_ENTITY_STOP_WATCH,
  ACTION_ENTITY_WATCH,
  ACTION_FEED_SETTINGS,
  ACTION_HOME_COIN,
  ACTION_OPEN_PAYMENT_PAGE,
  ACTION_REFRESH,
  ACTION_SHARE,
  ACTION_STOP_WATCH,
  ACTION_WATCH,
  SHORTCUT_CHECK_PAYMENT,
  VIEW_FEED_SETTINGS,
  VIEW_PAYMENT_ACCOUNT,
} from '../domain/actions.js';
import type { Command } from '../domain/commands.js';
import type { CommandHandler } from '../pipeline/ack-race.js';
import {
  actionListener,
  commandListener,
  eventListener,
  functionListener,
  shortcutListener,
  viewListener,
} from '../pipeline/kinds.js';
import type { Tracked, TrackingDeps } from '../pipeline/tracked.js';
import type { Installations } from '../store/installations.js';
import type { InstallationId } from '../store/keys.js';
import { createChooseHomeCoinAction } from './actions/choose-home-coin.js';
import type { ButtonArgs, ButtonHandler } from './actions/click.js';
import { createFeedSettingsAction } from './actions/feed-settings.js';
import { acknowledgeOpenPaymentPage } from './actions/open-payment-page.js';
import { createPanelRefresh, createPanelStopWatch, createPanelWatch } from './actions/panel-buttons.js';
import { createRefreshInvoiceAction } from './actions/refresh-invoice.js';
import { createShareInvoiceAction } from './actions/share-invoice.js';
import { createStopWatchAction } from './actions/stop-watch.js';
import { createWatchInvoiceAction } from './actions/watch-invoice.js';
import type { ClickArgs, CommandArgs, EventArgs, FunctionArgs, Listener, ShortcutArgs } from './args.js';
import { createBalanceCommand } from './commands/balance.js';
import { createInvoiceCommand } from './commands/invoice.js';
import type { ListenerDeps } from './deps.js';
import { createAppHomeOpened } from './events/app-home-opened.js';
import { createEntityDetailsRequested, panelNotConnected } from './events/entity-details-requested.js';
import { createLinkSharedEvent } from './events/link-shared.js';
import { createGetInvoiceStep, FUNCTION_GET_INVOICE } from './functions/get-invoice.js';
import {
  createFeedSettingsSubmit,
  type SettingsSubmitArgs,
  submitNotConnected,
} from './modals/feed-settings.js';
import type { Route } from './router.js';
import { createCheckPaymentShortcut } from './shortcuts/check-payment.js';
import { appUninstalled } from './workspaces/app-uninstalled.js';
import type { Answer, NotConnected } from './workspaces/not-connected.js';
import * as answers from './workspaces/not-connected.js';
import {
  connectPaymentAccount,
  disconnectPaymentAccount,
  type PaymentAccountDeps,
  submitPaymentKey,
} from './workspaces/payment-account.js';
import { tokensRevoked } from './workspaces/tokens-revoked.js';

/** What many workspaces' own routes are built from, once for all installations. */
export interface WorkspaceRoutesDeps extends TrackingDeps, PaymentAccountDeps {
  installations: Installations;
  /** Drops what this process keeps of an installation in memory. */
  forget: (id: InstallationId) => void;
}

/**
 * A request an installation serves itself: its handler, built from the installation's deps the
 * first time one of its requests asks for it (src/listeners/index.ts `createHandlers`), and what
 * the installation answers instead while its payment account is not connected.
 */
interface InstallationRoute<K extends string, N extends string, A> {
  readonly of: 'installation';
  readonly kind: K;
  readonly name: N;
  readonly handler: (deps: ListenerDeps) => Listener<A>;
  readonly notConnected: (nc: NotConnected) => Listener<A>;
}

/**
 * A request that is no installation's own work (the payment account, the install's lifecycle):
 * many workspaces only, built once; a workspace that is not connected gets this same route (it
 * is how the account is connected).
 */
interface WorkspacesRoute<K extends string> {
  readonly of: 'workspaces';
  readonly kind: K;
  readonly name: string;
  readonly handler: (deps: WorkspaceRoutesDeps) => Route;
}

/** A route an installation serves, with its not-connected answer told the route's name. */
function installation<K extends string, N extends string, A>(
  kind: K,
  name: N,
  handler: (deps: ListenerDeps) => Listener<A>,
  answer: Answer<A>,
): InstallationRoute<K, N, A> {
  return { of: 'installation', kind, name, handler, notConnected: (nc) => answer(nc, name) };
}

/* One maker a kind: the handler's maker, wrapped in its kind's pipeline (src/pipeline/kinds.ts). */
type Make<H> = (deps: ListenerDeps) => H;
type Handle<A> = (args: A) => Promise<Tracked>;

const command = <N extends Command>(name: N, make: Make<CommandHandler>, answer: Answer<CommandArgs>) =>
  installation(
    'command',
    name,
    (deps): Listener<CommandArgs> => commandListener(deps, name, make(deps)),
    answer,
  );
const button = <N extends string>(name: N, make: Make<ButtonHandler>, answer: Answer<ClickArgs>) =>
  installation(
    'action',
    name,
    (deps): Listener<ClickArgs> => actionListener<ButtonArgs>(deps, name, make(deps)),
    answer,
  );
/** A button whose handler opens a modal: it reads the click's trigger_id and Bolt's client. */
const opener = <N extends string>(name: N, make: Make<Handle<ClickArgs>>, answer: Answer<ClickArgs>) =>
  installation('action', name, (deps) => actionListener<ClickArgs>(deps, name, make(deps)), answer);
/** A modal's submission, answered in its ack (closed, updated, or errors under its inputs). */
const modal = <N extends string, A extends SettingsSubmitArgs>(
  name: N,
  make: Make<Handle<A>>,
  answer: Answer<A>,
) => installation('view', name, (deps) => viewListener<A>(deps, name, make(deps)), answer);
const shortcut = <N extends string>(
  name: N,
  make: Make<Handle<ShortcutArgs>>,
  answer: Answer<ShortcutArgs>,
) => installation('shortcut', name, (deps) => shortcutListener<ShortcutArgs>(deps, name, make(deps)), answer);
const step = <N extends string>(name: N, make: Make<Handle<FunctionArgs>>, answer: Answer<FunctionArgs>) =>
  installation('function', name, (deps) => functionListener<FunctionArgs>(deps, name, make(deps)), answer);
const event = <N extends string>(name: N, make: Make<Handle<EventArgs<N>>>, answer: Answer<EventArgs<N>>) =>
  installation(
    'event',
    name,
    (deps) =>
      eventListener(deps, name, make(deps) as unknown as Handle<SlackEventMiddlewareArgs>) as Listener<
        EventArgs<N>
      >,
    answer,
  );

/** The pipeline wrapper of each kind many workspaces route. */
const WRAP: Record<
  'action' | 'view' | 'event',
  (deps: TrackingDeps, name: string, handle: Handle<never>) => unknown
> = { action: actionListener, view: viewListener, event: eventListener };

/** A route of many workspaces; its handler reads what Bolt gives every request of its kind. */
const workspaces = <K extends keyof typeof WRAP, A>(
  kind: K,
  name: string,
  make: (deps: WorkspaceRoutesDeps) => Handle<A>,
): WorkspacesRoute<K> => ({
  of: 'workspaces',
  kind,
  name,
  handler: (deps) => WRAP[kind](deps, name, make(deps)) as Route,
});

/**
 * Every request the bot answers, one line each: its kind and name (what the router classifies,
 * src/listeners/router.ts), its handler (one a file), and what a workspace whose payment account
 * is not connected gets. A new command, button, shortcut, modal or event is a handler file and
 * a line here; the manifest (scripts/manifest.ts) and the not-connected answers read it too.
 */
export const ROUTES = [
  command('/balance', createBalanceCommand, answers.commandTold),
  command('/invoice', createInvoiceCommand, answers.invoiceTold),
  button(ACTION_REFRESH, createRefreshInvoiceAction, answers.clickTold),
  button(ACTION_OPEN_PAYMENT_PAGE, () => acknowledgeOpenPaymentPage, answers.clickAcknowledged),
  button(ACTION_WATCH, createWatchInvoiceAction, answers.clickTold),
  button(ACTION_STOP_WATCH, createStopWatchAction, answers.clickEnded),
  button(ACTION_SHARE, createShareInvoiceAction, answers.clickTold),
  button(ACTION_ENTITY_REFRESH, createPanelRefresh, answers.clickAcknowledged),
  button(ACTION_ENTITY_WATCH, createPanelWatch, answers.clickAcknowledged),
  button(ACTION_ENTITY_STOP_WATCH, createPanelStopWatch, answers.clickAcknowledged),
  shortcut(SHORTCUT_CHECK_PAYMENT, createCheckPaymentShortcut, answers.shortcutTold),
  event('link_shared', createLinkSharedEvent, answers.linkLeft),
  event('app_home_opened', createAppHomeOpened, answers.accountHome),
  event('entity_details_requested', createEntityDetailsRequested, panelNotConnected),
  step(FUNCTION_GET_INVOICE, createGetInvoiceStep, answers.stepFails),
  opener(ACTION_FEED_SETTINGS, createFeedSettingsAction, answers.clickTold),
  modal(VIEW_FEED_SETTINGS, createFeedSettingsSubmit, submitNotConnected),
  workspaces('action', ACTION_CONNECT, connectPaymentAccount),
  workspaces('action', ACTION_DISCONNECT, disconnectPaymentAccount),
  workspaces('view', VIEW_PAYMENT_ACCOUNT, submitPaymentKey),
  workspaces('event', 'app_uninstalled', appUninstalled),
  workspaces('event', 'tokens_revoked', tokensRevoked),
  button(ACTION_HOME_COIN, createChooseHomeCoinAction, answers.clickAcknowledged),
] as const;

export type AnyRoute = (typeof ROUTES)[number];
/** The routes an installation serves itself. */
export type OwnRoute = Extract<AnyRoute, { of: 'installation' }>;
