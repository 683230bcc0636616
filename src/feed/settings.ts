import { IANAZone } from 'luxon';
import type { DigestCadence, FeedSettings, FeedStyle, SettingChange } from '../domain/feed-settings.js';
import { Amount } from '../payments/index.js';
import { INPUT, SETTINGS_BLOCKS } from '../views/feed-settings.js';
import { type DigestTime, formatDigestTime } from './schedule.js';

/** What a submitted Settings modal holds, as Slack sends `view.state.values`. */
export type FormValues = Readonly<
  Record<
    string,
    Readonly<
      Record<
        string,
        {
          value?: string | null | undefined;
          selected_option?: { value?: string | undefined } | null | undefined;
          selected_options?: readonly { value?: string | undefined }[] | undefined;
          selected_time?: string | null | undefined;
        }
      >
    >
  >
>;

/** The settings and digest time a submission asks for, or what to show under which input. */
export type ReadForm =
  | { ok: true; settings: FeedSettings; digest: DigestTime }
  | { ok: false; errors: Record<string, string> };

const CADENCES: readonly DigestCadence[] = ['daily', 'weekly', 'off'];
const STYLES: readonly FeedStyle[] = ['full', 'condensed'];

/** The exact minimum per coin from the box's lines (`BTC 0.001`), or why a line is not one. */
function readMinimums(
  text: string,
  coins: ReadonlyMap<string, string>,
): { minimums: Record<string, string> } | { error: string } {
  const minimums: Record<string, string> = {};
  const lines = text.split('\n');
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const at = `Line ${i + 1}`;
    const [typed = '', digits = '', ...more] = line.split(/\s+/);
    if (digits === '' || more.length > 0)
      return { error: `${at}: write a coin and an amount, as in BTC 0.001.` };
    const coin = coins.get(typed.toLowerCase());
    if (coin === undefined) return { error: `${at}: ${typed} is not a coin of this account.` };
    if (coin in minimums) return { error: `${at}: ${coin} has a minimum on an earlier line already.` };
    const amount = Amount.parse(digits);
    if (amount === undefined) return { error: `${at}: ${digits} is not an exact amount, such as 0.001.` };
    if (amount.sign() < 0) return { error: `${at}: a minimum is never below 0.` };
    if (!amount.isZero()) minimums[coin] = amount.toString();
  }
  return { minimums };
}

/**
 * Reads a submitted Settings modal: the coins among `coins` (the last reading's ids), exact
 * minimums (big.js, never a float), the digest's cadence, day, time and IANA zone. Every input
 * that is wrong gets its own message, for Slack to show under it (`response_action: errors`).
 */
export function readSettingsForm(values: FormValues, coins: readonly string[]): ReadForm {
  const input = (block: string) => values[block]?.[INPUT];
  const byLower = new Map(coins.map((c) => [c.toLowerCase(), c]));
  const errors: Record<string, string> = {};

  const picked = (input(SETTINGS_BLOCKS.coins)?.selected_options ?? []).map((o) => o.value ?? '');
  const unknown = picked.filter((c) => !coins.includes(c));
  if (unknown.length > 0)
    errors[SETTINGS_BLOCKS.coins] = 'The account no longer has some of these coins: choose again.';

  const read = readMinimums(input(SETTINGS_BLOCKS.minimums)?.value ?? '', byLower);
  if ('error' in read) errors[SETTINGS_BLOCKS.minimums] = read.error;

  const style = STYLES.find((s) => s === input(SETTINGS_BLOCKS.style)?.selected_option?.value);
  if (!style) errors[SETTINGS_BLOCKS.style] = 'Choose full or condensed posts.';
  const digest = CADENCES.find((c) => c === input(SETTINGS_BLOCKS.digest)?.selected_option?.value);
  if (!digest) errors[SETTINGS_BLOCKS.digest] = 'Choose how often the digest goes out.';
  const weekday = Number(input(SETTINGS_BLOCKS.weekday)?.selected_option?.value);
  if (!Number.isInteger(weekday) || weekday < 1 || weekday > 7)
    errors[SETTINGS_BLOCKS.weekday] = 'Choose the day of a weekly digest.';

  const time = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(input(SETTINGS_BLOCKS.time)?.selected_time ?? '');
  if (!time) errors[SETTINGS_BLOCKS.time] = 'Choose the time of the digest.';
  const zone = (input(SETTINGS_BLOCKS.zone)?.value ?? '').trim();
  if (!IANAZone.isValidZone(zone))
    errors[SETTINGS_BLOCKS.zone] = 'Write an IANA time zone, such as Europe/Berlin or America/New_York.';

  if (Object.keys(errors).length > 0 || 'error' in read || !style || !digest || !time)
    return { ok: false, errors };
  return {
    ok: true,
    settings: { coins: picked.length === 0 ? null : picked, minimums: read.minimums, style, digest, weekday },
    digest: { hour: Number(time[1]), minute: Number(time[2]), zone },
  };
}

/** A feed's settings with its digest's time. */
export interface Tuning {
  settings: FeedSettings;
  time: DigestTime;
}

const sameCoins = (a: readonly string[] | null, b: readonly string[] | null) =>
  a === null || b === null
    ? a === b
    : a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

/** What a save changes, in the order the modal asks it; nothing when it is the same. */
export function settingChanges(before: Tuning, after: Tuning): SettingChange[] {
  const changes: SettingChange[] = [];
  const was = before.settings;
  const is = after.settings;
  if (!sameCoins(was.coins, is.coins)) changes.push({ kind: 'coins', to: is.coins });
  const coins = [...new Set([...Object.keys(was.minimums), ...Object.keys(is.minimums)])];
  for (const coin of coins) {
    const from = was.minimums[coin];
    const to = is.minimums[coin];
    const same =
      from !== undefined && to !== undefined && Amount.parse(from)?.equals(Amount.parse(to) ?? Amount.ZERO);
    if (from !== to && !same) changes.push({ kind: 'minimum', coin, to });
  }
  if (was.style !== is.style) changes.push({ kind: 'style', to: is.style });
  const schedule = formatDigestTime(after.time);
  const moved =
    was.digest !== is.digest ||
    (is.digest !== 'off' && schedule !== formatDigestTime(before.time)) ||
    (is.digest === 'weekly' && was.weekday !== is.weekday);
  if (moved) changes.push({ kind: 'digest', to: is.digest, weekday: is.weekday, schedule });
  return changes;
}
