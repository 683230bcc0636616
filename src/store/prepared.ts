import { CompiledQuery, type Kysely, PostgresAdapter, type QueryResult } from 'kysely';
import type { Tables } from './schema.js';

/**
 * Statements built and compiled once per shape, their values bound at each run.
 *
 * Building a Kysely query and compiling it to SQL costs more of the bot's CPU than sending it:
 * the checks of every watched invoice run the same few statements thousands of times a minute,
 * with other values. A prepared statement is built once with a stand-in (a symbol) for each of
 * its values, compiled, and from then on run with the values put where their stand-ins are in
 * the compiled parameters.
 *
 * A statement's shape is what its build depends on besides the values: the lengths of its lists
 * and the keys of its objects (and the database it runs on: one cache per `prepared`, used with
 * one store). Each shape is compiled once; on a database with Kysely plugins (which may change any
 * query as it is compiled), every run is built and compiled as usual. The build must use its arguments only as values of
 * the statement: a stand-in does not convert to a number or a string (arithmetic or a template
 * on one throws), and a value computed from one could not be put back. A value that does not
 * end up as one of the compiled parameters fails the run (a list meant as one parameter, a
 * value written into the SQL's text, an argument the statement does not use).
 */

/** The values a prepared statement is run with, taken apart: its shape, and its values in order. */
interface Flat {
  shape: string;
  values: unknown[];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;

/**
 * Walks `args` in a fixed order: lists and plain objects are shape; anything else is a value.
 * The shape is written so that no two shapes read the same: a list by its length (its items
 * follow, as many as it says), an object by its keys, a value by a dot.
 */
function flatten(args: unknown): Flat {
  let shape = '';
  const values: unknown[] = [];
  const walk = (value: unknown) => {
    if (Array.isArray(value)) {
      shape += `[${value.length}`;
      for (const item of value) walk(item);
    } else if (isRecord(value)) {
      for (const key of Object.keys(value)) {
        shape += JSON.stringify(key);
        walk(value[key]);
      }
      shape += '}';
    } else {
      shape += '.';
      values.push(value);
    }
  };
  walk(args);
  return { shape, values };
}

/** `args` with a stand-in in place of each value, in `flatten`'s order; `stands` gets each stand-in's index. */
function standIns<A>(args: A, stands: Map<symbol, number>): A {
  const swap = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(swap);
    if (isRecord(value)) return Object.fromEntries(Object.keys(value).map((key) => [key, swap(value[key])]));
    const stand = Symbol();
    stands.set(stand, stands.size);
    return stand;
  };
  return swap(args) as A;
}

/** A compiled statement: its SQL, and for each parameter the index of the value it takes, or a constant of the build's own. */
interface Plan {
  sql: string;
  parameters: readonly ({ value: number } | { constant: unknown })[];
}

/** Something Kysely compiles: a query builder, or a `sql` template (which asks for the database). */
interface Compilable<R> {
  compile(db: Kysely<Tables>): CompiledQuery<R>;
}

/** Compiled shapes kept per prepared statement: enough for every list length a claim uses, bounded whatever comes. */
const MAX_SHAPES = 256;

/** Whether `db` runs on PostgreSQL: for a build that differs by database (each has its own compiled shapes). */
export const onPostgres = (db: Kysely<Tables>) => db.getExecutor().adapter instanceof PostgresAdapter;

/** A prepared statement: `build` makes it from its arguments; the function it returns runs it on `db` (the store, or a transaction). */
export function prepared<A, R>(
  build: (db: Kysely<Tables>, args: A) => Compilable<R>,
): (db: Kysely<Tables>, args: A) => Promise<QueryResult<R>> {
  /** The compiled shapes of each database (its adapter: the store and its transactions share it). */
  const plansOf = new WeakMap<object, Map<string, Plan>>();
  const planOf = (db: Kysely<Tables>, args: A): Plan => {
    const stands = new Map<symbol, number>();
    const compiled = build(db, standIns(args, stands)).compile(db);
    const parameters = compiled.parameters.map((p) => {
      const value = stands.get(p as symbol);
      return value === undefined ? { constant: p } : { value };
    });
    // Every value must be one of the statement's parameters: one that is not was left out, or
    // taken apart (a list or an object meant as one parameter), or made into SQL text. Said now,
    // at the shape's first run, rather than each later run silently sending the first one's.
    const used = new Set(parameters.flatMap((p) => ('value' in p ? [p.value] : [])));
    if (used.size !== stands.size)
      throw new Error("prepared: a value of the arguments is not one of the statement's parameters");
    return { sql: compiled.sql, parameters };
  };
  return async (db, args) => {
    const { adapter, plugins } = db.getExecutor();
    // A plugin may change any query as it is compiled: with one, each run is built and compiled.
    if (plugins.length > 0) return db.executeQuery(build(db, args).compile(db));
    const { shape, values } = flatten(args);
    let plans = plansOf.get(adapter);
    if (!plans) {
      plans = new Map();
      plansOf.set(adapter, plans);
    }
    let plan = plans.get(shape);
    if (!plan) {
      plan = planOf(db, args);
      // The shape compiled longest ago goes first.
      if (plans.size >= MAX_SHAPES) plans.delete(plans.keys().next().value as string);
      plans.set(shape, plan);
    }
    const parameters = plan.parameters.map((p) => ('value' in p ? (values[p.value] ?? null) : p.constant));
    return db.executeQuery(CompiledQuery.raw(plan.sql, parameters) as CompiledQuery<R>);
  };
}
