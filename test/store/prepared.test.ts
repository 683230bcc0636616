import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DummyDriver,
  Kysely,
  type KyselyPlugin,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
} from 'kysely';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { onPostgres, prepared } from '../../src/store/prepared.js';
import type { Tables } from '../../src/store/schema.js';

const dir = mkdtempSync(join(tmpdir(), 'bot-prepared-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let store: Store;
let n = 0;
beforeEach(async () => {
  n += 1;
  store = await openStore({ kind: 'sqlite', path: join(dir, `${n}.sqlite`) });
  await store.db
    .insertInto('service_state')
    .values(['a', 'b', 'c', 'd'].map((key, i) => ({ key, value: key.toUpperCase(), updated_at: i + 1 })))
    .execute();
});
afterEach(() => store.close());

/** A statement whose builds are counted: the keys asked for, updated at or after `since`. */
function counted() {
  const builds: unknown[] = [];
  const run = prepared((db, args: { keys: string[]; since: number }) => {
    builds.push(args);
    return db
      .selectFrom('service_state')
      .select(['key', 'value'])
      .where('key', 'in', args.keys)
      .where('updated_at', '>=', args.since)
      .orderBy('key');
  });
  return { builds, run };
}

/** A PostgreSQL Kysely that sends nothing: each statement's SQL and parameters are logged. */
function postgresLogged() {
  const sent: { sql: string; parameters: readonly unknown[] }[] = [];
  const db = new Kysely<Tables>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    log: (event) => {
      sent.push({ sql: event.query.sql, parameters: event.query.parameters });
    },
  });
  return { db, sent };
}

describe('prepared statements', () => {
  it('binds each run its own values: the rows are the ones its values ask for', async () => {
    const { run } = counted();
    expect((await run(store.db, { keys: ['a', 'c'], since: 0 })).rows).toEqual([
      { key: 'a', value: 'A' },
      { key: 'c', value: 'C' },
    ]);
    expect((await run(store.db, { keys: ['b', 'd'], since: 0 })).rows).toEqual([
      { key: 'b', value: 'B' },
      { key: 'd', value: 'D' },
    ]);
    expect((await run(store.db, { keys: ['b', 'd'], since: 3 })).rows).toEqual([{ key: 'd', value: 'D' }]);
  });

  it('builds a shape once: a list of another length, or an object with other keys, is another shape', async () => {
    const { builds, run } = counted();
    await run(store.db, { keys: ['a', 'b'], since: 0 });
    await run(store.db, { keys: ['c', 'd'], since: 2 });
    expect(builds).toHaveLength(1);
    await run(store.db, { keys: ['a', 'b', 'c'], since: 0 });
    expect(builds).toHaveLength(2);
    await run(store.db, { keys: ['a'], since: 0 });
    await run(store.db, { keys: ['d'], since: 0 });
    expect(builds).toHaveLength(3);
  });

  it('an optional key is part of the shape, so its value is never left out of a later run', async () => {
    let builds = 0;
    const run = prepared((db, args: { key: string; value?: string }) => {
      builds += 1;
      const q = db.selectFrom('service_state').select('key').where('key', '>=', args.key);
      return args.value === undefined ? q : q.where('value', '=', args.value);
    });
    expect((await run(store.db, { key: 'b' })).rows.map((r) => r.key)).toEqual(['b', 'c', 'd']);
    expect((await run(store.db, { key: 'b', value: 'C' })).rows.map((r) => r.key)).toEqual(['c']);
    expect(builds).toBe(2);
  });

  it('tells apart shapes with as many values laid out otherwise: two lists, nested objects, lists of mixed items', async () => {
    const pg = postgresLogged();
    type Nested = { a: { b: string; c?: string }; c?: string };
    const statements = {
      lists: prepared((db, args: { keys: string[]; others: string[] }) =>
        db
          .selectFrom('service_state')
          .select('key')
          .where('key', 'in', args.keys)
          .where('value', 'in', args.others),
      ),
      nested: prepared((db, args: Nested) =>
        db
          .selectFrom('service_state')
          .select('key')
          .where('key', '=', args.a.b)
          .$if(args.a.c !== undefined, (q) => q.where('value', '=', args.a.c as string))
          .$if(args.c !== undefined, (q) => q.where('key', '<>', args.c as string)),
      ),
      mixed: prepared((db, args: (string | string[])[]) =>
        db
          .selectFrom('service_state')
          .select('key')
          .where((eb) => eb.or(args.map((x) => (Array.isArray(x) ? eb('key', 'in', x) : eb('key', '=', x))))),
      ),
    };
    await statements.lists(pg.db, { keys: ['a', 'b'], others: ['c'] });
    await statements.lists(pg.db, { keys: ['a'], others: ['b', 'c'] });
    await statements.nested(pg.db, { a: { b: 'x', c: 'y' } });
    await statements.nested(pg.db, { a: { b: 'x' }, c: 'y' });
    await statements.mixed(pg.db, ['a', ['b']]);
    await statements.mixed(pg.db, [['a'], 'b']);
    await statements.mixed(pg.db, [['a', 'b'], ['c']]);
    await statements.mixed(pg.db, [['a'], ['b', 'c']]);
    expect(pg.sent.map((s) => s.sql.replace('select "key" from "service_state" where ', ''))).toEqual([
      '"key" in ($1, $2) and "value" in ($3)',
      '"key" in ($1) and "value" in ($2, $3)',
      '"key" = $1 and "value" = $2',
      '"key" = $1 and "key" <> $2',
      '("key" = $1 or "key" in ($2))',
      '("key" in ($1) or "key" = $2)',
      '("key" in ($1, $2) or "key" in ($3))',
      '("key" in ($1) or "key" in ($2, $3))',
    ]);
    expect(pg.sent.map((s) => s.parameters).slice(4)).toEqual([
      ['a', 'b'],
      ['a', 'b'],
      ['a', 'b', 'c'],
      ['a', 'b', 'c'],
    ]);
  });

  it('binds an object that is not a plain one (a date) as one value', async () => {
    const pg = postgresLogged();
    const run = prepared((db, args: { at: Date }) =>
      db.selectFrom('service_state').select('key').where(sql<boolean>`${args.at} < now()`),
    );
    const at = new Date(0);
    await run(pg.db, { at });
    expect(pg.sent[0]?.parameters).toEqual([at]);
  });

  it('a value given as undefined is bound as null', async () => {
    const run = prepared((db, args: { value: string | undefined }) =>
      db.selectFrom('service_state').select(sql<number>`${args.value} is null`.as('none')),
    );
    const { rows } = await run(store.db, { value: undefined });
    expect(rows[0]?.none).toBe(1);
  });

  it('a build that computes with a value throws rather than running with a wrong one', async () => {
    const run = prepared((db, args: { since: number }) =>
      db
        .selectFrom('service_state')
        .select('key')
        .where('updated_at', '>=', args.since + 1),
    );
    await expect(run(store.db, { since: 1 })).rejects.toThrow(TypeError);
  });

  it('refuses a build that leaves a value out of its parameters: unused, or a list meant as one parameter', async () => {
    const unused = prepared((db, args: { key: string; since: number }) =>
      db.selectFrom('service_state').select('key').where('key', '=', args.key),
    );
    await expect(unused(store.db, { key: 'a', since: 1 })).rejects.toThrow(
      "prepared: a value of the arguments is not one of the statement's parameters",
    );
    const pg = postgresLogged();
    const whole = prepared((db, args: { keys: string[] }) =>
      db.selectFrom('service_state').select('key').where(sql<boolean>`"key" = any(${args.keys})`),
    );
    await expect(whole(pg.db, { keys: ['a', 'b'] })).rejects.toThrow('not one of the statement');
    expect(pg.sent).toEqual([]);
  });

  it('runs in a transaction, seeing its uncommitted writes', async () => {
    const { run } = counted();
    await run(store.db, { keys: ['e'], since: 0 });
    const seen = await store.transaction(async (trx) => {
      await trx.insertInto('service_state').values({ key: 'e', value: 'E', updated_at: 9 }).execute();
      return (await run(trx, { keys: ['e'], since: 0 })).rows;
    });
    expect(seen).toEqual([{ key: 'e', value: 'E' }]);
  });

  it('keeps at most 256 shapes: the one compiled longest ago is built again', async () => {
    const { builds, run } = counted();
    const keys = (length: number) => Array.from({ length }, (_, i) => `k${i}`);
    for (let length = 1; length <= 256; length += 1) await run(store.db, { keys: keys(length), since: 0 });
    expect(builds).toHaveLength(256);
    await run(store.db, { keys: keys(256), since: 0 });
    await run(store.db, { keys: keys(2), since: 0 });
    expect(builds).toHaveLength(256);
    await run(store.db, { keys: keys(257), since: 0 });
    await run(store.db, { keys: keys(2), since: 0 });
    expect(builds).toHaveLength(257);
    await run(store.db, { keys: keys(1), since: 0 });
    expect(builds).toHaveLength(258);
  });

  it('with a Kysely plugin, builds and compiles every run, so the plugin sees each query', async () => {
    let seen = 0;
    const plugin: KyselyPlugin = {
      transformQuery: (args) => {
        seen += 1;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const { builds, run } = counted();
    const db = store.db.withPlugin(plugin);
    await run(db, { keys: ['a'], since: 0 });
    expect((await run(db, { keys: ['b'], since: 0 })).rows).toEqual([{ key: 'b', value: 'B' }]);
    expect(builds).toHaveLength(2);
    expect(seen).toBe(2);
  });

  it('compiles for each database its own SQL: one statement on SQLite and on PostgreSQL', async () => {
    const pg = postgresLogged();
    const run = prepared((db, args: { keys: string[] }) =>
      db
        .selectFrom('service_state')
        .select('key')
        .where('key', 'in', args.keys)
        .$if(onPostgres(db), (q) => q.forUpdate()),
    );
    await run(pg.db, { keys: ['a', 'b'] });
    await run(pg.db, { keys: ['c', 'd'] });
    expect(pg.sent).toEqual([
      { sql: 'select "key" from "service_state" where "key" in ($1, $2) for update', parameters: ['a', 'b'] },
      { sql: 'select "key" from "service_state" where "key" in ($1, $2) for update', parameters: ['c', 'd'] },
    ]);
    expect(onPostgres(store.db)).toBe(false);
    expect((await run(store.db, { keys: ['a', 'b'] })).rows).toEqual([{ key: 'a' }, { key: 'b' }]);
  });

  it('keeps a constant of the build among the values, in its place', async () => {
    const pg = postgresLogged();
    const run = prepared((db, args: { since: number }) =>
      db
        .selectFrom('service_state')
        .select('key')
        .where('value', '=', 'A')
        .where('updated_at', '>=', args.since),
    );
    await run(pg.db, { since: 1 });
    await run(pg.db, { since: 7 });
    expect(pg.sent.map((s) => s.parameters)).toEqual([
      ['A', 1],
      ['A', 7],
    ]);
  });
});
