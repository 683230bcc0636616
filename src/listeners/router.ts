import type { AllMiddlewareArgs, AnyMiddlewareArgs, App } from '@slack/bolt';
import type { Logger } from '../logger.js';

/** The kinds of request Slack sends, as the router tells them apart. */
type RequestKind = 'command' | 'action' | 'event' | 'shortcut' | 'view' | 'function' | 'other';

/** What Slack asked for, read once from the request's body: its kind and the name it is routed by. */
interface Request {
  kind: RequestKind;
  name: string;
}

type Body = Record<string, unknown>;
const str = (value: unknown) => (typeof value === 'string' ? value : '');

/** A numbered button (`watch_invoice:3`, one per row of a list) is routed as its family. */
const family = (actionId: string) => actionId.replace(/:\d+$/, '');

/** Reads what a request is from its body: the one place the bot classifies Slack's requests. */
export function classify(body: Body): Request {
  if (typeof body.command === 'string') return { kind: 'command', name: body.command };
  const type = str(body.type);
  if (type === 'block_actions' && Array.isArray(body.actions))
    return { kind: 'action', name: family(str((body.actions[0] as Body | undefined)?.action_id)) };
  if (type === 'event_callback') {
    const event = (body.event ?? {}) as Body;
    if (event.type === 'function_executed')
      return { kind: 'function', name: str((event.function as Body | undefined)?.callback_id) };
    return { kind: 'event', name: str(event.type) };
  }
  if (type === 'message_action') return { kind: 'shortcut', name: str(body.callback_id) };
  if (type === 'view_submission')
    return { kind: 'view', name: str((body.view as Body | undefined)?.callback_id) };
  return { kind: 'other', name: type || str((body.view as Body | undefined)?.callback_id) };
}

/** The key a route is found by: `command /invoice`, `action refresh_invoice`, `view payment_account`. */
export const routeKey = ({ kind, name }: Request) => `${kind} ${name}`;

export type RouteArgs = AnyMiddlewareArgs & AllMiddlewareArgs;
/** A request's handler, already in the request pipeline (tracked: logged, metered, drained at stop). */
export type Route = (args: RouteArgs) => Promise<void>;

/** Distinct unknown requests warned about; after this many, further ones are only acknowledged. */
const MAX_WARNED = 100;

/**
 * The one router for every request: one global middleware classifies it once and hands it to its
 * route; no Bolt listener is registered (Bolt copies a request's arguments for every registered
 * listener on every request, which under load was most of the bot's garbage, issue 18). What has
 * no route (a button from an old message, a shortcut or a modal this version does not have) is
 * acknowledged at once and warned about once, instead of Bolt's 404 after 3 seconds.
 */
export function route(app: App, logger: Logger, routeOf: (request: Request) => Route | undefined): void {
  const warned = new Set<string>();
  app.use(async (args) => {
    const request = classify(args.body as unknown as Body);
    const handle = routeOf(request);
    if (handle) {
      await handle(args as RouteArgs);
      return;
    }
    if ('ack' in args && typeof args.ack === 'function') await args.ack();
    const key = routeKey(request);
    if (!warned.has(key) && warned.size < MAX_WARNED) {
      warned.add(key);
      logger.warn(
        { type: request.kind, name: request.name },
        'acknowledged a request this app has no listener for',
      );
    }
  });
}
