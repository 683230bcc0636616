import { describe, expect, it, vi } from 'vitest';
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

  it('writes a lone item once its window ends, unless every caller that could join has joined', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const statements: string[][] = [];
      const options = {
        flush: async (items: readonly string[]) => {
          statements.push([...items]);
          return items.map(() => true);
        },
        windowMs: 100,
        max: 10,
      };
      const waiting = coalesce<string, boolean>(options);
      const lone = waiting('a');
      await new Promise((resolve) => setImmediate(resolve));
      expect(statements).toEqual([]);
      await vi.advanceTimersByTimeAsync(100);
      expect(await lone).toBe(true);
      const ready = coalesce<string, boolean>({ ...options, ready: () => true });
      await Promise.all([ready('b'), ready('c')]);
      await new Promise((resolve) => setImmediate(resolve));
      // Both in one statement, and no statement of nothing after it.
      expect(statements).toEqual([['a'], ['b', 'c']]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('starts a new window for what comes after a batch that filled up before its own ended', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const statements: number[][] = [];
      const add = coalesce<number, boolean>({
        flush: async (items) => {
          statements.push([...items]);
          return items.map(() => true);
        },
        windowMs: 100,
        max: 2,
      });
      const full = [add(1), add(2)];
      await Promise.all(full);
      await vi.advanceTimersByTimeAsync(50);
      const late = add(3);
      // The full batch's window would have ended at 100: the late item waits for its own, at 150.
      await vi.advanceTimersByTimeAsync(70);
      expect(statements).toEqual([[1, 2]]);
      await vi.advanceTimersByTimeAsync(30);
      await late;
      expect(statements).toEqual([[1, 2], [3]]);
    } finally {
      vi.useRealTimers();
    }
  });
});
