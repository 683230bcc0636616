import type { App, Context } from '@slack/bolt';
import type { AckRaceDeps } from '../pipeline/ack-race.js';
import type { EventArgs } from './args.js';
import type { ListenerDeps } from './deps.js';
import { lazily } from './lazily.js';
import { type Route, route, routeKey } from './router.js';
import { type AnyRoute, type OwnRoute, ROUTES, type WorkspaceRoutesDeps } from './routes.js';
import { notConnected } from './workspaces/not-connected.js';

/**
 * Every request's handler an installation serves itself, by kind and name as its route in
 * ROUTES (src/listeners/routes.ts) says: `command['/invoice']`, `action.refresh_invoice`, … Each
 * is already wrapped in the request pipeline (tracked, and for commands the ack race).
 */
export type Handlers = {
  [K in OwnRoute['kind']]: {
    [R in Extract<OwnRoute, { kind: K }> as R['name']]: ReturnType<R['handler']>;
  };
};

const OWN = ROUTES.filter((r): r is OwnRoute => r.of === 'installation');
const OWN_BY_KEY = new Map<string, OwnRoute>(OWN.map((r) => [routeKey(r), r]));
const namesOf = (routes: readonly AnyRoute[], kind: AnyRoute['kind']) =>
  routes.filter((r) => r.kind === kind).map((r) => r.name);

/** The events an installation serves (every mode's manifest subscribes to them). */
export const EVENTS = namesOf(OWN, 'event');
/** The events many workspaces route besides (the manifest's `--mode many` subscribes to them). */
export const WORKSPACE_EVENTS = namesOf(
  ROUTES.filter((r) => r.of === 'workspaces'),
  'event',
);

/** Makes each handler of a set the first time it is read (src/listeners/lazily.ts). */
type Maker = () => unknown;
const BY_KIND = [...new Set(OWN.map((r) => r.kind))].map((kind) => ({
  kind,
  routes: OWN.filter((r) => r.kind === kind),
}));

/** A set of handlers, one for each route of ROUTES an installation serves, each made as `make` says when first read. */
function handlersFrom(make: (route: OwnRoute) => unknown): Handlers {
  const kinds: Record<string, Maker> = {};
  for (const { kind, routes } of BY_KIND)
    kinds[kind] = () =>
      lazily(Object.fromEntries(routes.map((r): [string, Maker] => [r.name, () => make(r)])));
  return lazily(kinds) as unknown as Handlers;
}

/**
 * The handlers of one installation's deps, each made the first time it is asked for: a request
 * builds its own handler only, over the deps it was given.
 */
export const createHandlers = (deps: ListenerDeps): Handlers => handlersFrom((r) => r.handler(deps));

/**
 * The handlers of an installation whose payment account is not connected (never, or no
 * longer): each route's not-connected answer (src/listeners/workspaces/not-connected.ts).
 */
export function notConnectedHandlers(
  deps: AckRaceDeps,
  installerUserId: string,
  publishHome: (args: EventArgs<'app_home_opened'>) => Promise<void>,
): Handlers {
  const nc = notConnected(deps, installerUserId, publishHome);
  return handlersFrom((r) => r.notConnected(nc));
}

/** The handlers for a request's installation: one set for the one workspace, or per installation. */
export type HandlersOf = (context: Context) => Promise<Handlers>;

/**
 * Routes of requests that are no installation's own work, by route key (`action …`, `view …`,
 * `event …`), each already in the request pipeline.
 */
export type MoreRoutes = Readonly<Record<string, Route>>;

/** Many workspaces' routes of ROUTES (the payment account, the install's lifecycle), built once. */
export const workspaceRoutes = (deps: WorkspaceRoutesDeps): MoreRoutes =>
  Object.fromEntries(
    ROUTES.flatMap((r) => (r.of === 'workspaces' ? [[routeKey(r), r.handler(deps)] as const] : [])),
  );

/**
 * Every request through one router (src/listeners/router.ts): the bot's own to the handlers of
 * the request's installation, the rest to `more`, anything else acknowledged and warned about.
 */
export function registerListeners(
  app: App,
  deps: Pick<ListenerDeps, 'logger'>,
  handlersOf: HandlersOf,
  more: MoreRoutes = {},
): void {
  route(app, deps.logger, (request) => {
    const key = routeKey(request);
    const own = OWN_BY_KEY.get(key);
    if (!own) return more[key];
    return async (args) => {
      const handlers = (await handlersOf(args.context)) as unknown as Record<
        OwnRoute['kind'],
        Record<OwnRoute['name'], Route>
      >;
      // Bolt acknowledges function_executed only for a listener registered with app.function.
      if (own.kind === 'function') await (args as { ack?: () => Promise<void> }).ack?.();
      await handlers[own.kind][own.name](args);
    };
  });
}
