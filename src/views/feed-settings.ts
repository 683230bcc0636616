import type { Button, KnownBlock, ModalView, PlainTextOption, SectionBlock } from '@slack/types';
import { ACTION_FEED_SETTINGS, VIEW_FEED_SETTINGS } from '../domain/actions.js';
import type { BalanceChange } from '../domain/balance.js';
import { type FeedSettings, type SettingChange, WEEKDAYS } from '../domain/feed-settings.js';
import { Amount } from '../payments/index.js';
import {
  actionButton,
  appendWithin,
  context,
  fallbackText,
  LIMITS,
  type Message,
  partsWithin,
  section,
  wholeContext,
} from './blocks.js';
import { grouped, signed } from './figures.js';
import { esc, join, type Mrkdwn, md, mention, slackDate } from './mrkdwn.js';

/**
 * The feed's Settings modal, the button that opens it, and what the feed says of its settings:
 * the change in the channel, a condensed post, the movements held below a minimum. Limits in
 * docs/slack.md#modals.
 */

/** Block ids of the modal's inputs; each input's element is `INPUT`. */
export const SETTINGS_BLOCKS = {
  coins: 'feed_coins',
  minimums: 'feed_minimums',
  style: 'feed_style',
  digest: 'feed_digest',
  weekday: 'feed_weekday',
  time: 'feed_digest_time',
  zone: 'feed_zone',
} as const;
export const INPUT = 'value';

/** Slack's limits for a modal and its elements (docs/slack.md#modals). */
const MODAL_LIMITS = { title: 24, options: 100, optionText: 75, optionValue: 150, inputChars: 3000 };

const plain = (text: string) => ({ type: 'plain_text' as const, text });
const cutTo = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
const option = (text: string, value: string): PlainTextOption => ({
  text: plain(cutTo(text, MODAL_LIMITS.optionText)),
  value,
});

export interface SettingsModalInput {
  /** Where the submission is written: the feed it was opened for (private_metadata). */
  subscriptionId: string;
  /** The feed's channel (who may change it is asked there). */
  channelId: string;
  settings: FeedSettings;
  /** The coins of the last reading, id and title, in its order. */
  coins: readonly { id: string; title: string }[];
  hour: number;
  minute: number;
  zone: string;
}

const CADENCES = [
  option('Every day', 'daily'),
  option('Every week', 'weekly'),
  option('Off: no digest', 'off'),
] as const;
const STYLES = [
  option('Full: each movement on its own line', 'full'),
  option('Condensed: one line a post', 'condensed'),
] as const;

/** A line of the minimums box: `BTC 0.001`. */
const minimumLines = (minimums: FeedSettings['minimums']) =>
  Object.entries(minimums)
    .map(([coin, min]) => `${coin} ${min}`)
    .join('\n');

const pad = (n: number) => String(n).padStart(2, '0');

const pick = (options: readonly PlainTextOption[], value: string) =>
  options.find((o) => o.value === value) ?? options[0];

/** What is posted: which coins, their minimums, full or condensed. */
function postBlocks(input: SettingsModalInput): KnownBlock[] {
  const { settings } = input;
  const coinOptions = input.coins
    .filter((c) => c.id.length <= MODAL_LIMITS.optionValue)
    .slice(0, MODAL_LIMITS.options)
    .map((c) => option(c.title.trim() === '' || c.title === c.id ? c.id : `${c.title} (${c.id})`, c.id));
  const chosen = coinOptions.filter((o) => settings.coins?.includes(o.value ?? '') === true);
  return [
    {
      type: 'input',
      block_id: SETTINGS_BLOCKS.coins,
      optional: true,
      label: plain('Coins posted'),
      hint: plain('Leave empty for every coin, those the account gains later too.'),
      element: {
        type: 'multi_static_select',
        action_id: INPUT,
        placeholder: plain('Every coin'),
        options: coinOptions.length > 0 ? coinOptions : [option('No coin read yet', '-')],
        ...(chosen.length > 0 ? { initial_options: chosen } : {}),
      },
    },
    {
      type: 'input',
      block_id: SETTINGS_BLOCKS.minimums,
      optional: true,
      label: plain('Minimum per coin'),
      hint: plain(
        'One coin a line, its id and an exact amount: BTC 0.001. A smaller movement is held and shown in the next post and in the digest.',
      ),
      element: {
        type: 'plain_text_input',
        action_id: INPUT,
        multiline: true,
        max_length: MODAL_LIMITS.inputChars,
        ...(Object.keys(settings.minimums).length > 0
          ? { initial_value: minimumLines(settings.minimums) }
          : {}),
      },
    },
    {
      type: 'input',
      block_id: SETTINGS_BLOCKS.style,
      label: plain('Posts'),
      element: {
        type: 'radio_buttons',
        action_id: INPUT,
        options: [...STYLES],
        initial_option: pick(STYLES, settings.style),
      },
    },
  ];
}

/** When the digest goes out: daily, weekly (its day) or off, its time and zone. */
function digestBlocks(input: SettingsModalInput): KnownBlock[] {
  const { settings } = input;
  const weekdays = WEEKDAYS.map((day, i) => option(day, String(i + 1)));
  return [
    {
      type: 'input',
      block_id: SETTINGS_BLOCKS.digest,
      label: plain('Digest'),
      element: {
        type: 'static_select',
        action_id: INPUT,
        options: [...CADENCES],
        initial_option: pick(CADENCES, settings.digest),
      },
    },
    {
      type: 'input',
      block_id: SETTINGS_BLOCKS.weekday,
      label: plain('Day of a weekly digest'),
      element: {
        type: 'static_select',
        action_id: INPUT,
        options: weekdays,
        initial_option: pick(weekdays, String(settings.weekday)),
      },
    },
    {
      type: 'input',
      block_id: SETTINGS_BLOCKS.time,
      label: plain('Digest time'),
      element: {
        type: 'timepicker',
        action_id: INPUT,
        initial_time: `${pad(input.hour)}:${pad(input.minute)}`,
      },
    },
    {
      type: 'input',
      block_id: SETTINGS_BLOCKS.zone,
      label: plain('Time zone'),
      hint: plain('An IANA time zone, such as Europe/Berlin or America/New_York.'),
      element: { type: 'plain_text_input', action_id: INPUT, initial_value: input.zone, max_length: 64 },
    },
  ];
}

/** The Settings modal, filled in with what is saved now. */
export const settingsModal = (input: SettingsModalInput): ModalView => ({
  type: 'modal',
  callback_id: VIEW_FEED_SETTINGS,
  private_metadata: input.subscriptionId,
  title: plain('Feed settings'),
  submit: plain('Save'),
  close: plain('Cancel'),
  blocks: [...postBlocks(input), ...digestBlocks(input)],
});

/** Told privately, in a modal of its own, to someone who may not change the feed (or when it ended). */
export function settingsNoticeModal(message: Message): ModalView {
  return { type: 'modal', title: plain('Feed settings'), close: plain('Close'), blocks: message.blocks };
}

/** The Settings button of the feed in `channelId`. */
const settingsButton = (channelId: string): Button =>
  actionButton('Settings', ACTION_FEED_SETTINGS, channelId);

/** A feed's line in a list, with its Settings button beside it. */
export const feedLineWithSettings = (line: Mrkdwn, channelId: string): SectionBlock =>
  section(line, settingsButton(channelId));

/** A feed's message (its confirmation) with the Settings button under it. */
export const withSettingsButton = (message: Message, channelId: string): Message => ({
  ...message,
  blocks: [
    ...message.blocks,
    { type: 'actions', block_id: 'feed_settings', elements: [settingsButton(channelId)] },
  ],
});

const coinList = (coins: readonly string[]) =>
  join(
    coins.map((c) => esc(c, 40)),
    ', ',
  );

function changeWords(change: SettingChange): Mrkdwn {
  switch (change.kind) {
    case 'minimum':
      return change.to === undefined
        ? md`removed the minimum for ${esc(change.coin, 40)}`
        : md`set the minimum for ${esc(change.coin, 40)} to ${change.to}`;
    case 'coins':
      return change.to === null
        ? md`posts every coin again`
        : md`chose the coins posted: ${coinList(change.to)}`;
    case 'style':
      return change.to === 'condensed' ? md`made the posts condensed` : md`made the posts full`;
    case 'digest':
      return change.to === 'off'
        ? md`turned the digest off`
        : change.to === 'weekly'
          ? md`set the digest to every ${WEEKDAYS[change.weekday - 1] ?? 'Monday'} at ${esc(change.schedule)}`
          : md`set the digest to every day at ${esc(change.schedule)}`;
  }
}

/** Said in the channel, once a save: who changed what ("@ana set the minimum for BTC to 0.001"). */
export function settingsChangedMessage(userId: string, changes: readonly SettingChange[]): Message {
  const body = md`${mention(userId)} ${join(changes.map(changeWords), '; ')}.`;
  return { text: fallbackText(body), blocks: [section(body)] };
}

/** The held movements of one coin: their exact sum and how many. */
export interface HeldSum {
  currency: string;
  sum: Amount;
  count: number;
}

/** Held amounts summed per coin, exactly (big.js), in the order first held. */
export function sumHeld(rows: readonly { currency: string; amount: string }[]): HeldSum[] {
  const sums = new Map<string, HeldSum>();
  for (const row of rows) {
    const was = sums.get(row.currency) ?? { currency: row.currency, sum: Amount.ZERO, count: 0 };
    const amount = Amount.parse(row.amount) ?? Amount.ZERO;
    sums.set(row.currency, { ...was, sum: was.sum.plus(amount), count: was.count + 1 });
  }
  return [...sums.values()];
}

const heldLine = (h: HeldSum) =>
  md`${signed(h.sum)} ${esc(h.currency, 40)} (${h.count} ${h.count === 1 ? 'movement' : 'movements'})`;

/**
 * `message` with the movements held below this channel's minimums said under it, each coin's
 * exact sum (as many coins as one note holds, "and N more coins" after them), in its blocks and
 * in its text, each whole or not at all (`appendWithin`): a message
 * already near Slack's size keeps the note in its text only, a text already full has it in the
 * blocks only, and where neither fits their count is said instead, never a sum cut short. `what`
 * says which: since the last post, or in the digest's period.
 */
export function withHeld(message: Message, held: readonly HeldSum[], what: string): Message {
  if (held.length === 0) return message;
  const { shown, omitted } = partsWithin(held.map(heldLine), ', ', LIMITS.contextText - what.length - 40);
  const rest = omitted === 0 ? md`` : md` and ${omitted} more ${omitted === 1 ? 'coin' : 'coins'}`;
  const line = md`${what}: ${shown}${rest}`;
  const movements = held.reduce((n, h) => n + h.count, 0);
  const count = md`${what}: ${movements} ${movements === 1 ? 'movement' : 'movements'} of ${held.length} ${held.length === 1 ? 'coin' : 'coins'}, not listed: this message has no room left`;
  return appendWithin(message, [
    { blocks: [wholeContext(line)], text: ` ${line.text}` },
    { text: ` ${line.text}` },
    { blocks: [wholeContext(line)] },
    { blocks: [wholeContext(count)], text: ` ${count.text}` },
    { blocks: [wholeContext(count)] },
  ]);
}

/** The text of a held note, for the feed post (since the last post) and the digest (its period). */
export const HELD_SINCE_LAST_POST = 'Held below this channel’s minimums since the last post';
export const HELD_IN_PERIOD = 'Held below this channel’s minimums in this period';

/** Characters of a condensed post's line kept for its lead and the "and N more" after it. */
const CONDENSED_WORDS = 60;

/**
 * A condensed feed post: every movement on one line ("+0.5 BTC, −2 ETH"), grouped for reading
 * in the block and exact in the text. A line longer than Slack allows ends between two movements,
 * never inside an amount, with "and N more", and its note says how many are not shown; the text
 * has every amount the block shows, digit for digit.
 */
export function condensedFeedMessage(changes: readonly BalanceChange[], readAt: Date, since?: Date): Message {
  const line = (figures: (a: Amount) => string) => {
    const parts = changes.map((c) => md`${signed(c.delta, figures)} ${esc(c.currency, 40)}`);
    const { shown, omitted } = partsWithin(parts, ', ', LIMITS.sectionText - CONDENSED_WORDS);
    return { omitted, words: omitted === 0 ? shown : md`${shown} and ${omitted} more` };
  };
  const block = line(grouped);
  const when =
    since === undefined
      ? md`read ${slackDate(readAt)}`
      : md`net change between ${slackDate(since)} and ${slackDate(readAt)}, the balance could not be read in between`;
  const notes = [md`Payments feed · ${when}`];
  if (block.omitted > 0)
    notes.push(
      md`${block.omitted} more ${block.omitted === 1 ? 'movement' : 'movements'} not shown: \`/balance\` shows every balance`,
    );
  return {
    text: fallbackText(md`Payments feed: ${line((a) => a.toString()).words}`),
    blocks: [section(md`:moneybag: ${block.words}`), context(...notes)],
  };
}
