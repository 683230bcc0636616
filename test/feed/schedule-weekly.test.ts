import { describe, expect, it } from 'vitest';
import { nextDigestAt } from '../../src/feed/schedule.js';

/** A weekly digest's next time: its weekday and local time, in the zone's own calendar. */

const BERLIN = { hour: 10, minute: 0, zone: 'Europe/Berlin' };
const at = (iso: string) => Date.parse(iso);

describe('the next weekly digest', () => {
  it('is later the same day when its time has not come yet, else a week on', () => {
    // Wednesday 25 November 2026, 08:59 UTC = 09:59 in Berlin.
    expect(nextDigestAt(BERLIN, at('2026-11-25T08:59:00Z'), 3)).toBe(at('2026-11-25T09:00:00Z'));
    expect(nextDigestAt(BERLIN, at('2026-11-25T09:00:00Z'), 3)).toBe(at('2026-12-02T09:00:00Z'));
  });

  it('keeps the wall-clock time across a daylight-saving change', () => {
    // Berlin leaves summer time on Sunday 25 October 2026: 10:00 is 08:00 UTC before, 09:00 after.
    expect(nextDigestAt(BERLIN, at('2026-10-21T08:00:00Z'), 3)).toBe(at('2026-10-28T09:00:00Z'));
    expect(nextDigestAt(BERLIN, at('2026-10-20T12:00:00Z'), 7)).toBe(at('2026-10-25T09:00:00Z'));
  });
});
