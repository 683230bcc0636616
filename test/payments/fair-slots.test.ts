import { describe, expect, it } from 'vitest';
import { BusyError } from '../../src/payments/errors.js';
import { FairSlots, type KeySlots, quietReserve } from '../../src/payments/fair-slots.js';

/** Calls whose end the test decides: each records when it started, and ends on `finish`. */
function calls() {
  const started: string[] = [];
  const ends = new Map<string, () => void>();
  const outcomes = new Map<string, string>();
  const call = (key: KeySlots, name: string, maxWaitMs?: number) => {
    const settled = key
      .run(
        () =>
          new Promise<void>((resolve) => {
            started.push(name);
            ends.set(name, resolve);
          }),
        maxWaitMs,
      )
      .then(
        () => outcomes.set(name, 'ok'),
        (error: Error) => outcomes.set(name, error instanceof BusyError ? 'busy' : error.message),
      );
    return settled;
  };
  /** Ends the call `name` and lets the slots move on. */
  const finish = async (name: string) => {
    const end = ends.get(name);
    if (!end) throw new Error(`${name} has not started`);
    end();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { started, outcomes, call, finish };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('slots shared by many keys', () => {
  it('gives the next free slot to a key asking once, ahead of a busy key’s backlog', async () => {
    const slots = new FairSlots({ slots: 2 });
    const busy = slots.key();
    const quiet = slots.key();
    const { started, call, finish } = calls();
    for (const n of [1, 2, 3, 4, 5]) void call(busy, `busy${n}`);
    await tick();
    void call(quiet, 'quiet');
    await tick();
    expect(started).toEqual(['busy1', 'busy2']);
    await finish('busy1');
    expect(started).toEqual(['busy1', 'busy2', 'quiet']);
    await finish('busy2');
    expect(started.at(-1)).toBe('busy3');
  });

  it('keeps the reserve for keys with nothing under way: a quiet key starts at once however busy the others', async () => {
    const slots = new FairSlots({ slots: 8, reserve: quietReserve(8) });
    const [a, b, c] = [slots.key(), slots.key(), slots.key()];
    const { started, call, finish } = calls();
    for (let n = 0; n < 20; n += 1) {
      void call(a, `a${n}`);
      void call(b, `b${n}`);
    }
    await tick();
    // Two busy keys share the seven slots that are not kept.
    expect(started).toHaveLength(7);
    expect(slots.running).toBe(7);
    void call(c, 'c');
    await tick();
    expect(started).toContain('c');
    expect(slots.running).toBe(8);
    // The kept slot does not go to a busy key when the quiet one's call ends.
    await finish('c');
    expect(started).toHaveLength(8);
    expect(slots.running).toBe(7);
  });

  it('shares the slots between busy keys: each freed slot goes to the key with the fewest running', async () => {
    const slots = new FairSlots({ slots: 4 });
    const [a, b] = [slots.key(), slots.key()];
    const { started, call, finish } = calls();
    for (let n = 0; n < 8; n += 1) void call(a, `a${n}`);
    await tick();
    for (let n = 0; n < 8; n += 1) void call(b, `b${n}`);
    await tick();
    expect(started).toEqual(['a0', 'a1', 'a2', 'a3']);
    await finish('a0');
    await finish('a1');
    // b had none running: it gets every freed slot until it runs as many as a.
    expect(started.slice(4)).toEqual(['b0', 'b1']);
    // From then on, whichever runs fewer.
    await finish('a2');
    expect(started.slice(6)).toEqual(['a4']);
    await finish('b0');
    expect(started.slice(7)).toEqual(['b2']);
  });

  it('keeps each key’s calls in the order they came', async () => {
    const slots = new FairSlots({ slots: 1 });
    const key = slots.key();
    const { started, call, finish } = calls();
    for (const n of [1, 2, 3]) void call(key, `k${n}`);
    await tick();
    await finish('k1');
    await finish('k2');
    expect(started).toEqual(['k1', 'k2', 'k3']);
  });

  it('holds a key to its own limit, leaving the other slots to the others', async () => {
    const slots = new FairSlots({ slots: 4 });
    const capped = slots.key({ concurrency: 2 });
    const other = slots.key();
    const { started, call } = calls();
    for (let n = 0; n < 4; n += 1) void call(capped, `c${n}`);
    await tick();
    expect(started).toEqual(['c0', 'c1']);
    void call(other, 'o');
    await tick();
    expect(started).toEqual(['c0', 'c1', 'o']);
  });
});

describe('how long a call waits', () => {
  it('fails a call that got no slot within maxWaitMs as busy, its work never started, saying how long it waited', async () => {
    const slots = new FairSlots({ slots: 1 });
    const key = slots.key();
    const { started, call, finish } = calls();
    void call(key, 'first');
    await tick();
    let ran = false;
    const error = await key
      .run(async () => {
        ran = true;
      }, 30)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(BusyError);
    expect(error).toMatchObject({ code: 'busy', message: expect.stringMatching(/within \d+ ms/) });
    expect((error as BusyError).waitedMs).toBeGreaterThanOrEqual(25);
    expect(ran).toBe(false);
    expect(key.queued).toBe(0);
    // Its place is given up: the next call after it runs when the slot frees.
    void call(key, 'next');
    await finish('first');
    expect(started).toEqual(['first', 'next']);
  });

  it('refuses a call at once when its key already has maxQueue waiting', async () => {
    const slots = new FairSlots({ slots: 1 });
    const key = slots.key({ maxQueue: 1 });
    const { started, outcomes, call } = calls();
    void call(key, 'running');
    void call(key, 'waiting');
    await call(key, 'refused');
    expect(outcomes.get('refused')).toBe('busy');
    expect(started).toEqual(['running']);
  });

  it('lets go only its own key’s waiting calls when told to', async () => {
    const slots = new FairSlots({ slots: 1 });
    const [a, b] = [slots.key(), slots.key()];
    const { outcomes, call, finish } = calls();
    void call(a, 'a0');
    const a1 = call(a, 'a1');
    void call(b, 'b1');
    await tick();
    a.releaseWaiting(new Error('circuit open'));
    await a1;
    expect(outcomes.get('a1')).toBe('circuit open');
    await finish('a0');
    await finish('b1');
    expect(outcomes.get('b1')).toBe('ok');
  });
});
