/**
 * How often a watched invoice is checked (docs/watches.md): every
 * `pollSeconds` for its first 30 minutes, then slower as it ages, doubling every half hour up to
 * a ceiling of five minutes (or `pollSeconds` when that is longer); after failures, slower still;
 * and always once right after its expiry. A check made a little late keeps the next one on time:
 * the step counts from when it was due, unless it came more than half a step late (the
 * instances are behind: they catch up by waiting, not by checking faster).
 */

const FAST_PHASE_MS = 30 * 60_000;
export const CEILING_MS = 5 * 60_000;
/** How soon after the expiry the check that sees it happens. */
export const AFTER_EXPIRY_MS = 5_000;

interface CadenceInput {
  now: number;
  /** When the watching began. */
  since: number;
  /** The invoice's expiry. */
  timeout: number;
  pollSeconds: number;
  /** Failed checks in a row. */
  failures: number;
  /** When this check was due, if it was a scheduled one. */
  due?: number;
}

/** When to check next. */
export function nextPollAt({ now, since, timeout, pollSeconds, failures, due = now }: CadenceInput): number {
  const base = pollSeconds * 1000;
  const ceiling = Math.max(base, CEILING_MS);
  const age = Math.max(0, now - since);
  const slowing = 2 ** Math.floor(age / FAST_PHASE_MS);
  const delay = Math.min(ceiling, base * slowing * 2 ** Math.min(failures, 10));
  const next = (now - due <= delay / 2 ? due : now) + delay;
  const afterExpiry = timeout + AFTER_EXPIRY_MS;
  return now < afterExpiry ? Math.min(afterExpiry, next) : next;
}
