/**
 * What a feed's channel tunes in its Settings modal (issue 40, point 4). Declared here, below the
 * views that draw it and the feed that applies it.
 */

/** How a feed post reads: every movement on its own line, or one line for them all. */
export type FeedStyle = 'full' | 'condensed';

/** How often the digest goes out. */
export type DigestCadence = 'daily' | 'weekly' | 'off';

export interface FeedSettings {
  /** The coins posted, by id; `null` for every coin, those the account gains later included. */
  coins: readonly string[] | null;
  /**
   * Per coin id, the exact decimal (as typed, checked by big.js) below which a movement is held
   * and folded into the next post instead of posted alone.
   */
  minimums: Readonly<Record<string, string>>;
  style: FeedStyle;
  digest: DigestCadence;
  /** The weekly digest's day, ISO: 1 Monday … 7 Sunday (kept while the digest is daily or off). */
  weekday: number;
}

export const DEFAULT_FEED_SETTINGS: FeedSettings = {
  coins: null,
  minimums: {},
  style: 'full',
  digest: 'daily',
  weekday: 1,
};

export const WEEKDAYS = [
  'Monday',
  'Tuesday',
  'Wednesday',
  'Thursday',
  'Friday',
  'Saturday',
  'Sunday',
] as const;

/** One thing a save changed, to be said in the channel. */
export type SettingChange =
  | { kind: 'minimum'; coin: string; to: string | undefined }
  | { kind: 'coins'; to: readonly string[] | null }
  | { kind: 'style'; to: FeedStyle }
  /** `schedule` reads `09:00 Europe/Berlin`. */
  | { kind: 'digest'; to: DigestCadence; weekday: number; schedule: string };
