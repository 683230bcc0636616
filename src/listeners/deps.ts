import type { SlashCommand } from '@slack/bolt';
import type { KnownBlock } from '@slack/types';
import type { Access, Action, Question } from '../access.js';
import type { Visibility } from '../domain/visibility.js';
import type { Feed } from '../feed/service.js';
import type { Metrics } from '../metrics.js';
import type { OutboxBacklog } from '../outbox.js';
import type { Health, PaymentsClient } from '../payments/index.js';
import type { AckRaceDeps } from '../pipeline/ack-race.js';
import type { SlackMethod } from '../slack/calls.js';
import type { SlackPoster } from '../slack/poster.js';
import type { HomeCoins } from '../store/home-coins.js';
import type { InstallationId } from '../store/keys.js';
import type { KeySource } from '../views/key.js';
import type { Watches } from '../watches/service.js';

/** What every listener is given: built once at start, nothing read from the environment here. */
export interface ListenerDeps extends AckRaceDeps {
  /** The installation served: '' for the one workspace (scopes its invoices' Work Object refs). */
  installation: InstallationId;
  /** Counts requests, and the Web API calls listeners make through Bolt's client. */
  metrics?: Pick<Metrics, 'request' | 'slackCall'>;
  payments: PaymentsClient;
  clock: () => Date;
  invoiceReply: Visibility;
  payUrl: URL | undefined;
  /** Who may do what, where: every listener asks before it acts. */
  access: Access;
  /** Live invoice watches, as requests use them. */
  watches: Pick<
    Watches,
    | 'start'
    | 'stop'
    | 'stopInvoice'
    | 'list'
    | 'startedBy'
    | 'watchable'
    | 'lookedUp'
    | 'ofInvoice'
    | 'statesSeen'
  >;
  /** The payments feed, as requests use it. */
  feed: Pick<Feed, 'subscribe' | 'unsubscribe' | 'list' | 'readingsAt' | 'settingsForm' | 'saveSettings'>;
  /** The bot's own posts (the shortcut's Share in thread). */
  poster: SlackPoster;
  /** The payment service as this instance has seen it, for the App Home. */
  health: Health;
  /** Since when the payment service has rejected the key, as all instances know it. */
  keyRejectedSince: () => Promise<number | undefined>;
  /** Where the key comes from (PAYMENT_API_KEY, or the workspace's connected account): what a rejected key's fix is. */
  keySource: KeySource;
  /** The bot's own messages waiting for Slack, as all instances know it, for the App Home. */
  outboxBacklog: () => Promise<OutboxBacklog>;
  /** For help texts that state the limits. */
  maxWatchDays: number;
  /**
   * True the first time a key is seen by any instance, within the hour: an event id (Slack retries
   * events), a Share in thread's claim (src/listeners/actions/share-invoice.ts).
   */
  firstSight: (key: string) => Promise<boolean>;
  /** More of the App Home for this person, after the bot's own (many workspaces: the payment account). */
  moreHome?: (userId: string) => Promise<KnownBlock[]>;
  /** The coin each person last chose for the App Home's week, kept per installation. */
  homeCoins?: HomeCoins;
}

/** Runs a Web API call made through Bolt's client and counts how it ended. */
export async function countedCall<T>(
  deps: ListenerDeps,
  method: SlackMethod,
  call: () => Promise<T>,
): Promise<T> {
  try {
    const result = await call();
    deps.metrics?.slackCall(method, 'ok');
    return result;
  } catch (error) {
    deps.metrics?.slackCall(method, 'error');
    throw error;
  }
}

/** A slash command's question to the access rules: who typed it (with their own team), and where. */
export const commandQuestion = (command: SlashCommand, what: Action): Question => ({
  who: { userId: command.user_id, teamId: command.team_id },
  where: { channelId: command.channel_id },
  what,
});
