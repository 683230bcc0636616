import type { AckRaceDeps } from '../../pipeline/ack-race.js';
import { acknowledge, deliver } from '../../pipeline/delivery.js';
import {
  actionListener,
  commandListener,
  eventListener,
  functionListener,
  shortcutListener,
} from '../../pipeline/kinds.js';
import { type Reply, reply, toResponse } from '../../pipeline/reply.js';
import type { Tracked } from '../../pipeline/tracked.js';
import { notConnectedMessage, stepNotConnected, watchesEndedMessage } from '../../views/installation.js';
import type { ClickArgs, CommandArgs, EventArgs, FunctionArgs, Listener, ShortcutArgs } from '../args.js';

/**
 * What an installation whose payment account is not connected (never, or no longer) answers:
 * every surface says privately that it is not and who can connect it, and calls no payment
 * service. Made once per such installation's request, for the route asked for.
 */
export interface NotConnected {
  deps: AckRaceDeps;
  /** "The payment account is not connected", naming who can connect it. */
  answer: Reply;
  /** What a stop is told: the watches ended with the Disconnect, not that nothing was ever connected. */
  ended: Reply;
  /** Publishes the App Home of the payment account alone. */
  publishHome: (args: EventArgs<'app_home_opened'>) => Promise<void>;
}

export function notConnected(
  deps: AckRaceDeps,
  installerUserId: string,
  publishHome: NotConnected['publishHome'],
): NotConnected {
  return {
    deps,
    answer: reply(notConnectedMessage(installerUserId), 'ephemeral', 'not_connected'),
    ended: reply(watchesEndedMessage(installerUserId), 'ephemeral', 'not_connected'),
    publishHome,
  };
}

/** A route's not-connected answer, for the route's name (one of the makers below). */
export type Answer<A> = (nc: NotConnected, name: string) => Listener<A>;

/** Told privately through the response_url, the clicked or shortcut's message left as it was. */
async function tell(
  { deps }: NotConnected,
  ack: () => Promise<void>,
  responseUrl: string | undefined,
  told: Reply,
): Promise<Tracked> {
  await acknowledge(ack, deps.logger);
  const delivery = responseUrl
    ? await deliver(
        deps.responseUrls,
        responseUrl,
        { ...toResponse(told), replace_original: false },
        deps.logger,
      )
    : undefined;
  return { outcome: 'not_connected', delivery };
}

/** A command: told in its ack. */
export const commandTold: Answer<CommandArgs> = (nc, name) =>
  commandListener(nc.deps, name, async () => nc.answer);

/** `/invoice`: told in its ack; `/invoice unwatch` is told its watches ended. */
export const invoiceTold: Answer<CommandArgs> = (nc, name) =>
  commandListener(nc.deps, name, async ({ text }) => (/^\s*unwatch\b/i.test(text) ? nc.ended : nc.answer));

/** A button: told beside the clicked message. */
export const clickTold: Answer<ClickArgs> = (nc, name) =>
  actionListener<ClickArgs>(nc.deps, name, ({ ack, body }) => tell(nc, ack, body.response_url, nc.answer));

/** A Stop button: told beside the clicked message that the watches ended. */
export const clickEnded: Answer<ClickArgs> = (nc, name) =>
  actionListener<ClickArgs>(nc.deps, name, ({ ack, body }) => tell(nc, ack, body.response_url, nc.ended));

/** A link button: Slack opens it; the click only needs its ack. */
export const clickAcknowledged: Answer<ClickArgs> = (nc, name) =>
  actionListener<ClickArgs>(nc.deps, name, ({ ack }) =>
    acknowledge(ack, nc.deps.logger).then(() => ({ outcome: 'ok' })),
  );

/** The message shortcut: told beside the message. */
export const shortcutTold: Answer<ShortcutArgs> = (nc, name) =>
  shortcutListener(nc.deps, name, ({ ack, shortcut }) => tell(nc, ack, shortcut.response_url, nc.answer));

/** A pasted payment link is left as Slack shows it (an unfurl is seen by the whole channel). */
export const linkLeft: Answer<EventArgs<'link_shared'>> = (nc, name) =>
  eventListener(nc.deps, name, async () => ({ outcome: 'not_connected', quiet: true }));

/** The App Home shows the payment account, with the button that connects it to those who may. */
export const accountHome: Answer<EventArgs<'app_home_opened'>> = (nc, name) =>
  eventListener(nc.deps, name, async (args: EventArgs<'app_home_opened'>) => {
    if (args.event.tab !== 'home') return { outcome: 'ok', quiet: true };
    await nc.publishHome(args);
    return { outcome: 'not_connected', delivery: 'view' };
  });

/** The workflow step fails with a line its author understands. */
export const stepFails: Answer<FunctionArgs> = (nc, name) =>
  functionListener(nc.deps, name, async ({ fail }: FunctionArgs) => {
    await fail({ error: stepNotConnected() });
    return { outcome: 'not_connected' };
  });
