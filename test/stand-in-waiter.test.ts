import { describe, expect, it } from 'vitest';
import { arrive, waiter } from './support/slack-stand-in-state.js';

/** The Slack stand-in's waiter: a test or benchmark worker hears of what it waits for as it arrives. */
describe('the stand-in waiter', () => {
  it('resolves with a matching item already there', async () => {
    const list = [{ id: 'a' }, { id: 'b' }];
    await expect(waiter(list, (x) => x.id === 'b', 'b', 1_000)).resolves.toBe(list[1]);
  });

  it('is told the moment a matching item arrives, not at a later look', async () => {
    const list: { id: string }[] = [];
    const told = waiter(list, (x) => x.id === 'b', 'b', 1_000);
    let heard: { id: string } | undefined;
    void told.then((x) => {
      heard = x;
    });
    arrive(list, { id: 'a' });
    await Promise.resolve();
    expect(heard).toBeUndefined();
    const b = { id: 'b' };
    arrive(list, b);
    await Promise.resolve();
    expect(heard).toBe(b);
    expect(list).toEqual([{ id: 'a' }, b]);
  });

  it('tells every waiter of the list, each of what it waits for', async () => {
    const list: number[] = [];
    const odd = waiter(list, (x) => x % 2 === 1, 'odd', 1_000);
    const even = waiter(list, (x) => x % 2 === 0, 'even', 1_000);
    arrive(list, 4);
    arrive(list, 7);
    await expect(Promise.all([odd, even])).resolves.toEqual([7, 4]);
  });

  it('gives up after its time, naming what it waited for, and hears nothing after', async () => {
    const list: number[] = [];
    let looked = 0;
    const waiting = waiter(
      list,
      () => {
        looked += 1;
        return false;
      },
      'a seven',
      20,
    );
    await expect(waiting).rejects.toThrow('timed out waiting for a seven');
    const before = looked;
    arrive(list, 7);
    expect(looked).toBe(before);
  });
});
