import type { HomeView, KnownBlock } from '@slack/types';
import type { Refusal } from '../access.js';
import { ACTION_STOP_WATCH } from '../domain/actions.js';
import type { BalanceEntry, HealthSnapshot } from '../payments/index.js';
import { actionButton, context, divider, fieldSections, header, section } from './blocks.js';
import { errorTitle } from './errors.js';
import type { SubscriptionListItem } from './feed.js';
import { feedLineWithSettings } from './feed-settings.js';
import { foldedZeros, grouped } from './figures.js';
import { type HomeTrend, homeTrendBlocks } from './home-trend.js';
import { statesInBrief } from './invoice.js';
import { type KeySource, keyFix } from './key.js';
import { channelMention, esc, join, type Mrkdwn, md, slackDate } from './mrkdwn.js';
import type { WatchListItem } from './watch.js';

/**
 * Rows of each list shown before "N more": together they keep the view well under the App
 * Home's 100 blocks (docs/slack.md#app-home) whatever the numbers.
 */
const MAX_BALANCE_ROWS = 40;
const MAX_WATCHES = 15;
const MAX_FEEDS = 10;

export type HomeBalance =
  | { kind: 'shown'; entries: readonly BalanceEntry[]; readAt: Date }
  /** Not for this person here: why, and where the balance may be read when that is the reason. */
  | { kind: 'refused'; refusal: Refusal; allowedChannels: readonly string[] }
  | { kind: 'failed'; error: unknown };

export interface HomeInput {
  balance: HomeBalance;
  watches: readonly (WatchListItem & { channelId: string })[];
  /** The workspace's feeds, for people who may see the balance; `undefined` for others. */
  feeds: readonly SubscriptionListItem[] | undefined;
  health: HealthSnapshot & { keyRejectedSince: Date | undefined; keySource: KeySource };
  /** The bot's own messages waiting for Slack, all instances together. */
  outbox: { pending: number; oldestAt: Date | undefined };
  now: Date;
  /** More sections, after the payment service's (many workspaces: the payment account). */
  more?: readonly KnownBlock[];
  /** One coin over the week, for people who may see the balance. */
  trend?: HomeTrend | undefined;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** Why the App Home shows no balance, and who decides or where it can be read. */
function refusedBalance(refusal: Refusal, allowedChannels: readonly string[]): Mrkdwn {
  switch (refusal) {
    case 'channel_not_allowed':
      return md`The balance is read only in the channels the bot’s admin set for it: \`/balance\` in ${join(allowedChannels.slice(0, 20).map(channelMention), ', ')}.`;
    case 'user_not_allowed':
      return md`The balance is shown only to the people the bot’s admin allows (\`BALANCE_ALLOWED_USERS\`). Ask them if you need it.`;
    case 'guest':
      return md`The balance is only for full members of this workspace, not its guests.`;
    default:
      return md`The balance is only for members of this workspace.`;
  }
}

function balanceBlocks(balance: HomeBalance): KnownBlock[] {
  switch (balance.kind) {
    case 'refused':
      return [section(refusedBalance(balance.refusal, balance.allowedChannels))];
    case 'failed':
      return [
        section(
          md`:warning: The balance could not be read just now: ${errorTitle(balance.error)}. Open this tab again in a minute.`,
        ),
      ];
    case 'shown': {
      const funded = balance.entries.filter((e) => !e.balance.isZero());
      const rows = funded
        .slice(0, MAX_BALANCE_ROWS)
        .map((e) => md`*${esc(e.title, 80)}*\n${grouped(e.balance)} ${esc(e.id, 40)}`);
      const notes: Mrkdwn[] = [md`Total across all projects · read ${slackDate(balance.readAt)}`];
      if (funded.length > rows.length)
        notes.push(md`${funded.length - rows.length} more funded currencies: \`/balance\` lists them all`);
      const zeros = balance.entries.length - funded.length;
      if (zeros > 0) notes.push(foldedZeros(zeros, rows.length > 0));
      return [
        ...(rows.length === 0 ? [section(md`No currency holds funds yet.`)] : fieldSections(rows)),
        context(...notes),
      ];
    }
  }
}

function watchBlocks(watches: HomeInput['watches']): KnownBlock[] {
  if (watches.length === 0) {
    return [
      section(
        md`You watch no invoice. \`/invoice watch ${'<id or link>'}\` in a channel, or *Watch* on an invoice card.`,
      ),
    ];
  }
  const shown = watches.slice(0, MAX_WATCHES).map((w, i) => {
    const brief =
      w.status === undefined || w.payStatus === undefined
        ? undefined
        : statesInBrief({ status: w.status, payStatus: w.payStatus });
    const state = brief ? brief.labels : md`not checked yet`;
    return section(
      md`*${esc(w.title ?? w.invoiceId, 150)}* in ${channelMention(w.channelId)}\n${state} · since ${slackDate(w.startedAt)}${brief?.sent ? md` · ${brief.sent}` : md``}`,
      actionButton('Stop', `${ACTION_STOP_WATCH}:${i}`, w.id),
    );
  });
  const more = watches.length - shown.length;
  return more > 0
    ? [...shown, context(md`${more} more not shown: \`/invoice watching\` in each channel lists them.`)]
    : shown;
}

function feedBlocks(feeds: readonly SubscriptionListItem[]): KnownBlock[] {
  if (feeds.length === 0)
    return [
      section(
        md`No channel receives the payments feed. \`/balance subscribe\` in a private channel turns it on.`,
      ),
    ];
  const shown = feeds.slice(0, MAX_FEEDS);
  const more = feeds.length - shown.length;
  return [
    ...shown.map((f) =>
      feedLineWithSettings(md`${channelMention(f.channelId)} · digest ${f.digest}`, f.channelId),
    ),
    ...(more > 0 ? [context(md`${more} more: \`/balance subscriptions\``)] : []),
  ];
}

const PROBLEMS: Record<string, string> = {
  service_unavailable: 'the service could not be reached or was failing',
  timeout: 'the service did not answer in time',
  rate_limited: 'the service asked the bot to slow down',
  unexpected_response: 'the service sent an answer the bot could not read',
  service_error: 'the service answered with an error',
};

const problemWords = (result: string, source: KeySource): Mrkdwn | string =>
  result === 'invalid_api_key'
    ? md`the service rejected the API key: it works again once ${keyFix(source)}`
    : (PROBLEMS[result] ?? result);

function healthBlocks(health: HomeInput['health']): KnownBlock[] {
  const lines: Mrkdwn[] = [];
  if (health.breaker !== 'closed') {
    lines.push(
      md`:red_circle: The payment service is not answering. Commands say so at once, and watches and feeds are paused; the bot keeps trying and resumes them as soon as it answers.`,
    );
  }
  lines.push(
    health.lastSuccess
      ? md`:white_check_mark: Last good answer from the payment service: ${slackDate(health.lastSuccess.at)} (${health.lastSuccess.operation})`
      : md`No call to the payment service has been answered since this instance started.`,
  );
  if (health.keyRejectedSince) {
    lines.push(
      md`:warning: Since ${slackDate(health.keyRejectedSince)} the service rejects the bot’s API key: watches and feeds are paused until ${keyFix(health.keySource)}.`,
    );
  } else if (health.lastProblem) {
    lines.push(
      md`Last problem: ${problemWords(health.lastProblem.result, health.keySource)}, ${slackDate(health.lastProblem.at)}. If it keeps happening, tell the bot’s admin.`,
    );
  }
  return [section(join(lines, '\n'))];
}

/** A message waiting longer than this is no longer just on its way: Slack is failing or asks to wait. */
const BACKLOG_SHOWN_AFTER_MS = 60_000;

function backlogBlocks(outbox: HomeInput['outbox'], now: Date): KnownBlock[] {
  const { pending, oldestAt } = outbox;
  if (oldestAt === undefined || now.getTime() - oldestAt.getTime() < BACKLOG_SHOWN_AFTER_MS) return [];
  return [
    section(
      md`:hourglass_flowing_sand: ${plural(pending, 'message to Slack is', 'messages to Slack are')} waiting, the oldest since ${slackDate(oldestAt)}: Slack is failing or asks the bot to wait. They go out in order, once each, as soon as it takes them again.`,
    ),
  ];
}

const HELP = md`*\`/balance\`* the balance, privately · \`/balance subscribe\` a payments feed for a private channel
*\`/invoice ${'<id or link>'}\`* an invoice in the channel · \`/invoice watch\` hear when it is paid
*Check payment status* (a message’s ⋮ menu) looks up every invoice in a message, in threads too`;

/**
 * A person's App Home: the balance if they may see it, their watches with Stop buttons, the
 * payments feeds, the payment service's health, and what the bot does. Within 100 blocks.
 */
export function homeView(input: HomeInput): HomeView {
  const blocks: KnownBlock[] = [
    header('Balance'),
    ...balanceBlocks(input.balance),
    ...(input.trend ? [divider(), ...homeTrendBlocks(input.trend)] : []),
    divider(),
    header(`Your watches (${input.watches.length})`),
    ...watchBlocks(input.watches),
    ...(input.feeds
      ? [divider(), header(`Payments feeds (${input.feeds.length})`), ...feedBlocks(input.feeds)]
      : []),
    divider(),
    header('Payment service'),
    ...healthBlocks(input.health),
    ...backlogBlocks(input.outbox, input.now),
    ...(input.more?.length ? [divider(), ...input.more] : []),
    divider(),
    section(md`${HELP}`),
    context(md`Updated ${slackDate(input.now)} · opening this tab reads everything again`),
  ];
  return { type: 'home', blocks };
}
