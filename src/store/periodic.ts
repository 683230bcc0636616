/**
 * Work an instance does at most once every `everyMs` (a prune, a look for times a stepped-back
 * clock wrote), measured on the time it is given, and at once when that time went back past
 * the last run: `due(now)` says whether to do it now, and counts it done then; `again()` lets
 * the next call through (more was left).
 */
export function periodic(everyMs: number) {
  let last = Number.NEGATIVE_INFINITY;
  return {
    due(now: number): boolean {
      if (now >= last && now - last < everyMs) return false;
      last = now;
      return true;
    },
    again(): void {
      last = Number.NEGATIVE_INFINITY;
    },
  };
}
