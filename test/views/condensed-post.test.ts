import { describe, expect, it } from 'vitest';
import type { BalanceChange } from '../../src/domain/balance.js';
import { Amount } from '../../src/payments/index.js';
import { condensedFeedMessage } from '../../src/views/feed-settings.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';

/** A condensed feed post of more movements than one line holds: cut between two, never inside an amount. */

const AT = new Date('2026-11-21T12:00:00Z');
const exact = (text: string) => Amount.parse(text) ?? Amount.ZERO;

/** Movements of `n` coins with 40-character ids and amounts of 40 digits, each different. */
const movements = (n: number): BalanceChange[] =>
  Array.from({ length: n }, (_, i) => {
    const delta = exact(`${1000 + i}${'9'.repeat(26)}.${'1'.repeat(9)}`);
    return {
      currency: `COIN${i}`.padEnd(40, 'X'),
      title: `Coin ${i}`,
      delta,
      before: Amount.ZERO,
      after: delta,
    } as BalanceChange;
  });

const ungrouped = (text: string) => text.replace(/(\d),(?=\d{3})/g, '$1');

describe('a condensed post of many movements', () => {
  it('keeps each movement it shows whole, in the line and the text, and says how many it left out', () => {
    const changes = movements(60);
    const message = condensedFeedMessage(changes, AT);
    expectValidMessage(message);
    const line = ungrouped(visibleText({ blocks: message.blocks.slice(0, 1) }));
    const shown = changes.filter((c) => line.includes(`+${c.delta.toString()} ${c.currency}`));
    expect(shown.length).toBeGreaterThan(10);
    expect(shown).toEqual(changes.slice(0, shown.length));
    const left = changes.length - shown.length;
    expect(line).toMatch(new RegExp(`${shown.at(-1)?.currency} and ${left} more$`));
    expect(visibleText(message)).toContain(
      `${left} more movements not shown: \`/balance\` shows every balance`,
    );
    // Every digit the line shows is in the text, and the text cuts none either.
    for (const c of shown) expect(message.text).toContain(`+${c.delta.toString()} ${c.currency}`);
    expect(message.text).toMatch(/ and \d+ more$/);
    expect(message.text.length).toBeLessThanOrEqual(3000);
  });

  it('lists every movement when they fit, with no count', () => {
    const changes = movements(3);
    const message = condensedFeedMessage(changes, AT);
    expect(message.text).toBe(
      `Payments feed: ${changes.map((c) => `+${c.delta.toString()} ${c.currency}`).join(', ')}`,
    );
    expect(visibleText(message)).not.toContain('more');
  });
});
