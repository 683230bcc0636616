import { describe, expect, it } from 'vitest';
import { AFTER_EXPIRY_MS, CEILING_MS, nextPollAt } from '../../src/watches/cadence.js';

const MIN = 60_000;
const at = (overrides: Partial<Parameters<typeof nextPollAt>[0]> = {}) => {
  const input = { now: 0, since: 0, timeout: 1e12, pollSeconds: 30, failures: 0, ...overrides };
  return nextPollAt(input) - input.now;
};

describe('nextPollAt', () => {
  it.each([
    [0, 30_000],
    [29 * MIN, 30_000],
    [30 * MIN, 60_000],
    [59 * MIN, 60_000],
    [60 * MIN, 120_000],
    [90 * MIN, 240_000],
    [120 * MIN, CEILING_MS],
    [3 * 24 * 60 * MIN, CEILING_MS],
  ])(
    'waits the poll interval in the first 30 minutes, then doubles each half hour to the ceiling: age %i ms → %i ms',
    (age, delay) => {
      expect(at({ now: age })).toBe(delay);
    },
  );

  it('never waits less than the poll interval, even above the ceiling', () => {
    expect(at({ pollSeconds: 600, now: 10 * 60 * MIN })).toBe(600_000);
  });

  it.each([
    [1, 60_000],
    [2, 120_000],
    [3, 240_000],
    [4, CEILING_MS],
    [50, CEILING_MS],
  ])('backs off after %i failures to %i ms', (failures, delay) => {
    expect(at({ failures })).toBe(delay);
  });

  it('checks right after the expiry when that comes before the next step', () => {
    expect(at({ now: 1000, timeout: 11_000 })).toBe(10_000 + AFTER_EXPIRY_MS);
  });

  it('does not check again at once when it is exactly the moment after the expiry', () => {
    expect(at({ now: 11_000 + AFTER_EXPIRY_MS, timeout: 11_000 })).toBe(30_000);
  });

  it('counts the step from when the check was due, unless it came more than half a step late', () => {
    // Due at 100 000, made 4 s late: the next is due 30 s after 100 000, not after 104 000.
    expect(
      nextPollAt({ now: 104_000, due: 100_000, since: 0, timeout: 1e12, pollSeconds: 30, failures: 0 }),
    ).toBe(130_000);
    // Exactly half a step late still keeps the time; more than that counts from now.
    expect(at({ now: 115_000, due: 100_000 })).toBe(15_000);
    expect(at({ now: 115_001, due: 100_000 })).toBe(30_000);
    // After failures the longer step counts from the due time the same way.
    expect(at({ now: 130_000, due: 100_000, failures: 1 })).toBe(30_000);
    expect(at({ now: 130_001, due: 100_000, failures: 1 })).toBe(60_000);
  });

  it('keeps its cadence once the check after the expiry has passed', () => {
    expect(at({ now: 20_000, timeout: 11_000 })).toBe(30_000);
    expect(at({ now: 1000, timeout: 1000 + 30_000 })).toBe(30_000);
  });
});
