import { describe, expect, it } from 'vitest';
import { claimFairly } from '../../src/runner/fair-claim.js';

/**
 * The fair claim's walk on its own, over a store stood in by two functions: what it asks for,
 * what it leases, and how many statements that takes.
 */
interface Row {
  installation_id: string;
  id: string;
}

const row = (installation: string, id: string): Row => ({ installation_id: installation, id });

/** A store whose due rows are `due` (in turn order), of which `takenByOthers` are leased by another instance first. */
function store(due: Row[], takenByOthers: ReadonlySet<string> = new Set()) {
  const leased = new Set<string>();
  const asked: number[] = [];
  const leases: string[][] = [];
  return {
    asked,
    leases,
    candidates: async (room: number) => {
      asked.push(room);
      return due.filter((r) => !leased.has(r.id));
    },
    lease: async (chosen: Row[]) => {
      leases.push(chosen.map((r) => r.id));
      const got = chosen.filter((r) => !takenByOthers.has(r.id));
      for (const r of chosen) leased.add(r.id);
      return got;
    },
  };
}

const claim = (
  s: ReturnType<typeof store>,
  limit: number,
  room: (r: Row, several: boolean) => number = () => Number.POSITIVE_INFINITY,
  busy = new Map<string, number>(),
) =>
  claimFairly({
    limit,
    busy,
    candidates: s.candidates,
    lease: s.lease,
    room,
    tag: (r) => r.id,
  });

describe('a claim shared fairly between installations', () => {
  it('takes what it chose in one round (two statements) when nobody else was quicker', async () => {
    const s = store([row('A', 'a1'), row('B', 'b1'), row('A', 'a2')]);
    expect((await claim(s, 2)).map((r) => r.id)).toEqual(['a1', 'b1']);
    expect(s.asked).toEqual([2]);
    expect(s.leases).toEqual([['a1', 'b1']]);
  });

  it('reads again only for what other instances took, asking for what is still missing', async () => {
    const s = store([row('A', 'a1'), row('B', 'b1'), row('A', 'a2'), row('B', 'b2')], new Set(['b1']));
    expect((await claim(s, 3)).map((r) => r.id)).toEqual(['a1', 'a2', 'b2']);
    expect(s.asked).toEqual([3, 1]);
    expect(s.leases).toEqual([['a1', 'b1', 'a2'], ['b2']]);
  });

  it('leases nothing when nothing may be chosen, and stops there', async () => {
    const s = store([row('A', 'a1'), row('A', 'a2')]);
    expect(await claim(s, 2, () => 1, new Map([['A', 1]]))).toEqual([]);
    expect(s.asked).toEqual([2]);
    expect(s.leases).toEqual([]);
  });

  it('gives each installation its room, less what this instance runs of it already, while several have work due', async () => {
    const s = store([row('A', 'a1'), row('B', 'b1'), row('A', 'a2'), row('B', 'b2'), row('A', 'a3')]);
    const room = (_: Row, several: boolean) => (several ? 2 : Number.POSITIVE_INFINITY);
    expect((await claim(s, 5, room, new Map([['B', 1]]))).map((r) => r.id)).toEqual(['a1', 'b1', 'a2']);
  });

  it('stops after four rounds however much others take', async () => {
    const due = Array.from({ length: 10 }, (_, n) => row('A', `a${n}`));
    const s = store(due, new Set(due.map((r) => r.id)));
    expect(await claim(s, 1)).toEqual([]);
    expect(s.leases).toEqual([['a0'], ['a1'], ['a2'], ['a3']]);
  });
});
