import { DateTime, IANAZone, type WeekdayNumbers } from 'luxon';

/** When the daily digest goes out: a local time and the IANA time zone it is in. */
export interface DigestTime {
  hour: number;
  minute: number;
  zone: string;
}

export const DEFAULT_DIGEST: DigestTime = { hour: 9, minute: 0, zone: 'UTC' };

const words = (text: string): string[] => text.match(/\S+/g) ?? [];

/**
 * `HH:MM [Area/City]` as typed after `/balance subscribe`; `undefined` when it is neither a time
 * of day nor a time zone luxon knows. `UTC` is accepted as a zone. The zone is kept under the
 * name given; with none given it is UTC, for `inZone` to make it the subscriber's own.
 */
export function parseDigestTime(text: string): DigestTime | undefined {
  const [at, zone = DEFAULT_DIGEST.zone, ...more] = words(text);
  if (at === undefined) return DEFAULT_DIGEST;
  if (more.length > 0) return undefined;
  const time = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(at);
  if (!time) return undefined;
  if (!IANAZone.isValidZone(zone)) return undefined;
  return { hour: Number(time[1]), minute: Number(time[2]), zone: spelling(zone) };
}

/** Whether `HH:MM [Area/City]` as typed names its time zone. */
export const namesZone = (text: string): boolean => words(text).length > 1;

/** The same time of day in `zone` (the subscriber's own, from Slack), when luxon knows it. */
export const inZone = (time: DigestTime, zone: string | undefined): DigestTime =>
  zone !== undefined && IANAZone.isValidZone(zone) ? { ...time, zone: spelling(zone) } : time;

/**
 * The name the person gave, as the time zone database spells it (`america/new_york` is
 * `America/New_York`), never swapped for another name of the same zone: Node 20's ICU resolves
 * `Europe/Kyiv` to its old name `Europe/Kiev`, `Asia/Kolkata` to `Asia/Calcutta`.
 */
function spelling(zone: string): string {
  const resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  return resolved.toLowerCase() === zone.toLowerCase() ? resolved : zone;
}

/** `09:00 Europe/Berlin`. */
export const formatDigestTime = ({ hour, minute, zone }: DigestTime) =>
  `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')} ${zone}`;

/**
 * The first digest time strictly after `after` (epoch ms), in the zone's own calendar, so a
 * daylight-saving change moves it with the clocks on the wall (luxon does the arithmetic; a time
 * that does not exist that day is taken as the next one that does). With `weekday` (ISO, 1
 * Monday … 7 Sunday) only that day of the week is one.
 */
export function nextDigestAt(time: DigestTime, after: number, weekday?: number): number {
  const local = DateTime.fromMillis(after, { zone: time.zone });
  const at = { hour: time.hour, minute: time.minute, second: 0, millisecond: 0 };
  if (weekday !== undefined) {
    const day = { weekday: weekday as WeekdayNumbers, ...at };
    const candidate = local.set(day);
    return (candidate.toMillis() <= after ? local.plus({ weeks: 1 }).set(day) : candidate).toMillis();
  }
  const candidate = local.set(at);
  return (candidate.toMillis() <= after ? local.plus({ days: 1 }).set(at) : candidate).toMillis();
}
