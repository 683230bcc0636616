import { describe, expect, it } from 'vitest';
import { coalesce } from '../../src/store/coalesce.js';

/** Many callers' writes as one statement (group commit). */
describe('coalesced writes', () => {
  it('writes at most `max` items a statement, and what gathers while one is written in the next', async () => {
    const statements: number[][] = [];
    let release: (() => void) | undefined;
    const add = coalesce<number, boolean>({
      flush: async (items) => {
        statements.push([...items]);
        if (statements.length === 1) await new Promise<void>((resolve) => (release = resolve));
        return items.map((n) => n % 2 === 0);
      },
      windowMs: 10_000,
      max: 3,
    });
    const first = [1, 2, 3, 4].map((n) => add(n));
    await new Promise((resolve) => setImmediate(resolve));
    expect(statements).toEqual([[1, 2, 3]]);
    const later = [5, 6].map((n) => add(n));
    release?.();
    expect(await Promise.all([...first, ...later])).toEqual([false, true, false, true, false, true]);
    expect(statements).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
  });
});
