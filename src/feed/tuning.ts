import type { StoredBalance } from '../domain/balance.js';
import { type FeedSettings, WEEKDAYS } from '../domain/feed-settings.js';
import type { BackgroundDeps } from '../scheduler.js';
import { type SettingsModalInput, settingsChangedMessage } from '../views/feed-settings.js';
import { digestOf, type FeedQueries } from './queries.js';
import { DEFAULT_SAVED } from './queries-settings.js';
import { type DigestTime, formatDigestTime, nextDigestAt } from './schedule.js';
import { settingChanges } from './settings.js';

type TuningDeps = Pick<BackgroundDeps, 'store' | 'clock' | 'wakeOutbox'> & { queries: FeedQueries };

export interface SaveRequest {
  /** The feed the modal was opened for: a feed turned off and on again since is another one. */
  subscriptionId: string;
  userId: string;
  settings: FeedSettings;
  digest: DigestTime;
}

type SaveResult = { kind: 'saved' } | { kind: 'unchanged' } | { kind: 'ended' };

/** The next digest of a feed, by its time and its settings (a weekly one on its day). */
export const nextDigestOf = (time: DigestTime, settings: FeedSettings, after: number) =>
  nextDigestAt(time, after, settings.digest === 'weekly' ? settings.weekday : undefined);

/** A feed's digest as its lists say it: `09:00 UTC`, `Wednesdays 10:00 Europe/Berlin`, `off`. */
export function digestWords(time: DigestTime, settings: FeedSettings): string {
  if (settings.digest === 'off') return 'off';
  const at = formatDigestTime(time);
  return settings.digest === 'weekly' ? `${WEEKDAYS[settings.weekday - 1] ?? 'Monday'}s ${at}` : at;
}

/** A save that lost to another, tried again over what that one wrote. */
const RACED = Symbol('raced');
const TRIES = 3;

/**
 * A feed's Settings: what its modal shows, and saving a submission. A save and the message that
 * says it in the channel are one transaction, written only over the version of the settings it
 * read (a number the database keeps): a submission retried, or two instances taking the same
 * one at once, say the change once; the later finds nothing left to change.
 */
export function feedTuning(deps: TuningDeps) {
  const { store, clock, queries } = deps;

  /** The coins of the last reading, id and title, in its order. */
  async function coins(): Promise<{ id: string; title: string }[]> {
    const latest = await queries.latestReading(store.db);
    if (!latest) return [];
    return Object.entries(JSON.parse(latest.balances) as StoredBalance).map(([id, e]) => ({
      id,
      title: e.title,
    }));
  }

  async function saveOnce(req: SaveRequest): Promise<SaveResult | typeof RACED> {
    return store.transaction(async (trx) => {
      const sub = await queries.activeById(trx, req.subscriptionId);
      if (!sub) return { kind: 'ended' };
      const saved = (await queries.settingsOf(trx, [sub.id])).get(sub.id) ?? DEFAULT_SAVED;
      const before = { settings: saved.settings, time: digestOf(sub) };
      const changes = settingChanges(before, { settings: req.settings, time: req.digest });
      if (changes.length === 0) return { kind: 'unchanged' };
      const now = clock();
      if (!(await queries.writeSettings(trx, sub.id, req.settings, saved.version, now))) return RACED;
      const rescheduled =
        formatDigestTime(before.time) !== formatDigestTime(req.digest) ||
        nextDigestOf(req.digest, saved.settings, now) !== nextDigestOf(req.digest, req.settings, now);
      if (rescheduled)
        await queries.moveDigest(trx, sub.id, req.digest, nextDigestOf(req.digest, req.settings, now));
      await queries.enqueueTo(trx, [sub], settingsChangedMessage(req.userId, changes), now);
      return { kind: 'saved' };
    });
  }

  return {
    /**
     * What the Settings modal of a feed shows, the feed found by its channel (a click) or its id (a
     * submission); undefined when it is not on (any longer).
     */
    async settingsForm(
      feed: { channelId: string } | { subscriptionId: string },
    ): Promise<SettingsModalInput | undefined> {
      const sub =
        'channelId' in feed
          ? await queries.activeInChannel(store.db, feed.channelId)
          : await queries.activeById(store.db, feed.subscriptionId);
      if (!sub) return undefined;
      const { settings } = (await queries.settingsOf(store.db, [sub.id])).get(sub.id) ?? DEFAULT_SAVED;
      const { hour, minute, zone } = digestOf(sub);
      return {
        subscriptionId: sub.id,
        channelId: sub.channel_id,
        settings,
        coins: await coins(),
        hour,
        minute,
        zone,
      };
    },

    /** Saves a submission and says in the channel what changed, once. */
    async saveSettings(req: SaveRequest): Promise<SaveResult> {
      for (let attempt = 1; ; attempt += 1) {
        const result = await saveOnce(req);
        if (result !== RACED) {
          if (result.kind === 'saved') deps.wakeOutbox?.();
          return result;
        }
        if (attempt === TRIES) throw new Error('feed settings: another save won every try');
      }
    },
  };
}
