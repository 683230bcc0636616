import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';
import type { Logger } from '../logger.js';

/** What this app registered listeners for: the names its manifest can make Slack send. */
export interface KnownRequests {
  commands: string[];
  /** Action ids, or patterns for families of them (one Stop button per row of a list). */
  actions: (string | RegExp)[];
  events: string[];
  shortcuts: string[];
  /** Modals' callback ids, for their submissions. */
  views: string[];
}

/** Distinct unknown requests warned about; after this many, further ones are only acknowledged. */
const MAX_WARNED = 100;

type Body = Record<string, unknown>;
const str = (value: unknown) => (typeof value === 'string' ? value : '');

/** The kind of request and the name it would be routed by, e.g. `block_actions old_button`. */
function routeOf(body: Body): { type: string; names: string[] } {
  if (typeof body.command === 'string') return { type: 'command', names: [body.command] };
  const type = str(body.type);
  if (type === 'block_actions' && Array.isArray(body.actions)) {
    return { type, names: body.actions.map((a: { action_id?: unknown }) => str(a?.action_id)) };
  }
  if (type === 'event_callback')
    return { type: 'event', names: [str((body.event as Body | undefined)?.type)] };
  if (type === 'message_action' || type === 'shortcut') return { type, names: [str(body.callback_id)] };
  if (type === 'view_submission' || type === 'view_closed')
    return { type, names: [str((body.view as Body | undefined)?.callback_id)] };
  return { type: type || 'unknown', names: [] };
}

function isKnown(known: KnownRequests, { type, names }: { type: string; names: string[] }): boolean {
  const list =
    type === 'command'
      ? known.commands
      : type === 'block_actions'
        ? known.actions
        : type === 'event'
          ? known.events
          : type === 'message_action'
            ? known.shortcuts
            : type === 'view_submission' || type === 'view_closed'
              ? known.views
              : [];
  return names.some((name) =>
    list.some((known) => (typeof known === 'string' ? known === name : known.test(name))),
  );
}

/**
 * Global middleware: what the app has no listener for (a button from an old message, a shortcut
 * or a modal this version does not have) is acknowledged at once and warned about once, instead
 * of Bolt's 404 after 3 seconds and an error for every click.
 */
export function acknowledgeUnknown(known: KnownRequests, logger: Logger): Middleware<AnyMiddlewareArgs> {
  const warned = new Set<string>();
  return async (args) => {
    const route = routeOf(args.body as unknown as Body);
    if (isKnown(known, route)) {
      await args.next();
      return;
    }
    if ('ack' in args && typeof args.ack === 'function') await args.ack();
    const key = `${route.type} ${route.names.join(',')}`.trim();
    if (!warned.has(key) && warned.size < MAX_WARNED) {
      warned.add(key);
      logger.warn(
        { type: route.type, name: route.names.join(',') },
        'acknowledged a request this app has no listener for',
      );
    }
  };
}
