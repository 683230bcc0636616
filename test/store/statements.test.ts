import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { keptStatements } from '../../src/store/statements.js';

/** A real in-memory SQLite database, counting how often each statement is prepared. */
function counted() {
  const database = new Database(':memory:');
  const prepared: string[] = [];
  let closed = false;
  const spy = {
    prepare(sql: string) {
      prepared.push(sql);
      return database.prepare(sql);
    },
    close() {
      closed = true;
      database.close();
    },
  };
  return { spy, prepared, closed: () => closed };
}

describe('keptStatements', () => {
  it('prepares a statement once however often it runs, with each run its own parameters', () => {
    const { spy, prepared } = counted();
    const db = keptStatements(spy);
    db.prepare('create table t (a integer)').run([]);
    for (const a of [1, 2, 3]) db.prepare('insert into t (a) values (?)').run([a]);
    expect(db.prepare('select a from t where a >= ? order by a').all([2])).toEqual([{ a: 2 }, { a: 3 }]);
    expect(db.prepare('select a from t where a >= ? order by a').all([3])).toEqual([{ a: 3 }]);
    expect(prepared.filter((s) => s.startsWith('insert'))).toHaveLength(1);
    expect(prepared.filter((s) => s.startsWith('select'))).toHaveLength(1);
  });

  it('a kept statement sees a column added after it was prepared', () => {
    const { spy } = counted();
    const db = keptStatements(spy);
    db.prepare('create table t (a integer)').run([]);
    db.prepare('insert into t (a) values (1)').run([]);
    expect(db.prepare('select * from t').all([])).toEqual([{ a: 1 }]);
    db.prepare("alter table t add column b text default 'x'").run([]);
    expect(db.prepare('select * from t').all([])).toEqual([{ a: 1, b: 'x' }]);
  });

  it('keeps at most `max` statements, letting the least recently used go first', () => {
    const { spy, prepared } = counted();
    const db = keptStatements(spy, 2);
    const select = (n: number) => db.prepare(`select ${n} as n`).all([]);
    select(1);
    select(2);
    select(1); // 1 is now the most recent: 2 goes when 3 comes
    select(3);
    select(1);
    expect(prepared).toEqual(['select 1 as n', 'select 2 as n', 'select 3 as n']);
    select(2);
    expect(prepared.at(-1)).toBe('select 2 as n');
    expect(prepared).toHaveLength(4);
  });

  it('closes the database it keeps statements of', () => {
    const { spy, closed } = counted();
    keptStatements(spy).close();
    expect(closed()).toBe(true);
  });
});
