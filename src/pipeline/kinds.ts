import type {
  BlockAction,
  MessageShortcut,
  SlackActionMiddlewareArgs,
  SlackCommandMiddlewareArgs,
  SlackEventMiddlewareArgs,
  SlackShortcutMiddlewareArgs,
  SlackViewMiddlewareArgs,
} from '@slack/bolt';
import { type AckRaceDeps, ackRace, type CommandHandler } from './ack-race.js';
import { type Kind, type Tracked, type TrackingDeps, tracked, type Who } from './tracked.js';

/**
 * `tracked` for each kind of Slack request, with who asked and where read from its payload.
 * Listener files hold handlers; their routes (listeners/routes.ts) wrap them with these.
 */

/** A wrapper for one kind of request whose payloads all extend `Base`. */
function kindOf<Base>(kind: Kind, who: (args: Base) => Who) {
  return <A extends Base>(deps: TrackingDeps, name: string, handle: (args: A) => Promise<Tracked>) =>
    tracked<A>(deps, kind, name, who, handle);
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

const command = kindOf('command', ({ command }: SlackCommandMiddlewareArgs) => ({
  user: command.user_id,
  team: command.team_id,
  channel: command.channel_id,
}));

export const commandListener = (deps: AckRaceDeps, name: string, handle: CommandHandler) =>
  command(deps, name, ackRace(deps, handle));

export const actionListener = kindOf('action', ({ body }: SlackActionMiddlewareArgs<BlockAction>) => ({
  user: body.user.id,
  team: body.team?.id,
  channel: body.channel?.id,
}));

export const shortcutListener = kindOf(
  'shortcut',
  ({ body }: SlackShortcutMiddlewareArgs<MessageShortcut>) => ({
    user: body.user.id,
    team: body.team?.id,
    channel: body.channel.id,
  }),
);

/** Events: who and where, when the event says (link_shared, app_home_opened and function_executed differ). */
export const eventListener = kindOf('event', ({ event, body }: SlackEventMiddlewareArgs) => {
  const fields = event as unknown as Record<string, unknown>;
  return { user: text(fields.user), team: body.team_id, channel: text(fields.channel) };
});

export const functionListener = kindOf(
  'function',
  ({ body }: SlackEventMiddlewareArgs<'function_executed'>) => ({
    team: body.team_id,
  }),
);

/** A modal's submission: who submitted it, from which team. */
export const viewListener = kindOf('view', ({ body }: SlackViewMiddlewareArgs) => ({
  user: body.user.id,
  team: body.user.team_id ?? body.team?.id,
}));
