import { describe, expect, it } from 'vitest';
import { BusyError } from '../../src/payments/errors.js';
import { FairSlots, type KeySlots } from '../../src/payments/fair-slots.js';

/** Whose turn comes next when a slot frees, after some calls gave up waiting. */

/** Calls whose end the test decides: each records when it started, and ends on `finish`. */
function calls() {
  const started: string[] = [];
  const ends = new Map<string, () => void>();
  const errors = new Map<string, Error>();
  const call = (key: KeySlots, name: string, maxWaitMs?: number) =>
    key
      .run(
        () =>
          new Promise<void>((resolve) => {
            started.push(name);
            ends.set(name, resolve);
          }),
        maxWaitMs,
      )
      .catch((error: Error) => {
        errors.set(name, error);
      });
  /** Ends the call `name` and lets the slots move on. */
  const finish = async (name: string) => {
    const end = ends.get(name);
    if (!end) throw new Error(`${name} has not started`);
    end();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { started, errors, call, finish };
}

describe('the next turn', () => {
  it('goes, among keys running as many, to the one that has waited longest', async () => {
    const slots = new FairSlots({ slots: 1 });
    const [x, a, b] = [slots.key(), slots.key(), slots.key()];
    const { started, call, finish } = calls();
    void call(x, 'x');
    void call(a, 'a');
    void call(b, 'b');
    await finish('x');
    expect(started).toEqual(['x', 'a']);
    await finish('a');
    expect(started).toEqual(['x', 'a', 'b']);
  });

  it('goes to another key when the first in line gave up waiting', async () => {
    const slots = new FairSlots({ slots: 1 });
    const [x, a, b] = [slots.key(), slots.key(), slots.key()];
    const { started, errors, call, finish } = calls();
    void call(x, 'x');
    const gaveUp = call(a, 'a', 20);
    void call(b, 'b');
    await gaveUp;
    expect(errors.get('a')).toBeInstanceOf(BusyError);
    await finish('x');
    expect(started).toEqual(['x', 'b']);
  });

  it('still comes to a key whose earlier call gave up waiting', async () => {
    const slots = new FairSlots({ slots: 1 });
    const [x, a] = [slots.key(), slots.key()];
    const { started, errors, call, finish } = calls();
    void call(x, 'x');
    const gaveUp = call(a, 'a1', 20);
    void call(a, 'a2');
    await gaveUp;
    expect(errors.get('a1')).toBeInstanceOf(BusyError);
    expect(a.queued).toBe(1);
    await finish('x');
    expect(started).toEqual(['x', 'a2']);
  });
});

describe('a call that gave up waiting', () => {
  it('says how long it waited, on the clock it was given', async () => {
    let now = 1000;
    const slots = new FairSlots({ slots: 1, now: () => now });
    const key = slots.key();
    const { errors, call } = calls();
    void call(key, 'first');
    const gaveUp = call(key, 'late', 20);
    now = 1035;
    await gaveUp;
    expect(errors.get('late')).toMatchObject({
      waitedMs: 35,
      message: 'no connection to the payment service came free within 35 ms; no call was made',
    });
  });
});
