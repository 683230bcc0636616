import { type FeedSettings, WEEKDAYS } from '../domain/feed-settings.js';
import { fallbackText, type Message, section } from './blocks.js';
import { md, mention } from './mrkdwn.js';

/** When a feed's digest goes out, as its Settings say (src/domain/feed-settings.ts). */
export type DigestCadenceOf = Pick<FeedSettings, 'digest' | 'weekday'>;

/** The weekly digest's day: `Wednesday`. */
export const dayOf = (cadence: DigestCadenceOf) => WEEKDAYS[cadence.weekday - 1] ?? WEEKDAYS[0];

/**
 * Posted in the channel when someone moves its digest: who, and from when to when. The digest
 * its Settings made weekly is said as weekly, on its day; one they turned off keeps the new time
 * and is said to be off, never as a daily digest that will not come.
 */
export function digestMovedMessage(input: {
  userId: string;
  digest: string;
  was: string;
  cadence: DigestCadenceOf;
}): Message {
  const who = mention(input.userId);
  const body =
    input.cadence.digest === 'off'
      ? md`${who} set the digest time of this channel to ${input.digest} (it was ${input.was}); the digest is off in this feed’s Settings, so none goes out until it is turned on there.`
      : input.cadence.digest === 'weekly'
        ? md`${who} moved the weekly balance digest of this channel to ${dayOf(input.cadence)}s at ${input.digest} (it was at ${input.was}).`
        : md`${who} moved the daily balance digest of this channel to ${input.digest} (it was at ${input.was}).`;
  return { text: fallbackText(body), blocks: [section(body)] };
}

/** Said to the person who moved the channel's digest, as its Settings have it (`digestMovedMessage`). */
export function digestMovedReply(digest: string, was: string, cadence: DigestCadenceOf): Message {
  const body =
    cadence.digest === 'off'
      ? md`Done: the digest time of this channel is ${digest} from now on (it was ${was}), but the digest is off in this feed’s Settings: turn it on there to receive it.`
      : md`Done: the payments feed goes on in this channel, with its ${cadence.digest === 'weekly' ? `weekly digest every ${dayOf(cadence)}` : 'digest every day'} at ${digest} from now on (it was at ${was}).`;
  return { text: fallbackText(body), blocks: [section(body)] };
}
