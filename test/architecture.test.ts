import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The shape of src/ (docs/architecture.md): one direction, from the edges (main, the HTTP
 * server, the app's assembly) down to pure views and the payments client. Every import, type
 * imports too, is read from the files themselves.
 */

const SRC = new URL('../src/', import.meta.url).pathname;

/** The one file that may cast to the installation id's brand: its constructor's. */
const BRAND_FILE = 'store/keys.ts';

/**
 * Layers, lowest first: a module may import from its own layer or a lower one, never a higher.
 * Every entry is a folder (`payments/`) or a file at the top of src/ (`config.ts`), never a file
 * inside a folder: a folder is one layer, whole. A file stays at the top when it is the one module
 * of its kind (the configuration, the logger, the scheduler, the metrics…); it is then a unit of
 * its own, checked as a folder is.
 */
const LAYERS: readonly (readonly string[])[] = [
  // Small helpers with no knowledge of the bot.
  ['text.ts', 'slack-ids.ts', 'redact.ts', 'inflight.ts'],
  // The domain: the two services' clients, the access rules, the bot's plain values, the store.
  ['payments/', 'slack/', 'access.ts', 'domain/', 'store/'],
  ['config.ts', 'config/', 'logger.ts'],
  ['views/', 'sandbox/'],
  ['pipeline/'],
  ['service-state.ts', 'scheduler.ts', 'runner/', 'outbox.ts', 'outbox-claim.ts'],
  ['watches/', 'feed/'],
  ['metrics.ts'],
  ['listeners/'],
  ['http/', 'installations/', 'app.ts', 'lifecycle.ts'],
  ['main.ts', 'demo/'],
];

/** The unit a file belongs to: its folder under src/ (`feed/`), or itself when at the top (`config.ts`). */
const unitOf = (file: string): string => {
  const slash = file.indexOf('/');
  return slash < 0 ? file : file.slice(0, slash + 1);
};

const layerOf = (file: string): number => {
  const index = LAYERS.findIndex((layer) => layer.includes(unitOf(file)));
  if (index < 0) throw new Error(`${file} is in no layer: add it to LAYERS`);
  return index;
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative import and re-export of each file under src/, type-only ones included. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const path of sources(SRC)) {
    const text = readFileSync(path, 'utf8');
    const targets = [
      ...text.matchAll(/\b(?:import|export)\s[^'";]*?\bfrom\s+'(\.[^']+)'/g),
      ...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g),
    ].map((m) => relative(SRC, normalize(join(dirname(path), m[1] as string))).replace(/\.js$/, '.ts'));
    graph.set(relative(SRC, path), targets);
  }
  return graph;
}

/** The imports between units (folders and top-level files), each once; a unit's imports of itself left out. */
function unitGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const units = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = unitOf(file);
    const edges = units.get(from) ?? new Set<string>();
    for (const target of targets) if (unitOf(target) !== from) edges.add(unitOf(target));
    units.set(from, edges);
  }
  return new Map([...units].map(([unit, edges]) => [unit, [...edges].sort()]));
}

/** The import cycles: strongly connected groups of more than one file (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number));
      } else if (stack.includes(target)) {
        low.set(file, Math.min(low.get(file) as number, index.get(target) as number));
      }
    }
    if (low.get(file) === index.get(file)) {
      const group: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop() as string;
        group.push(member);
      } while (member !== file);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe('the shape of src/', () => {
  const graph = importGraph();

  it('reads every module and its imports', () => {
    expect(graph.get('app.ts')).toContain('listeners/index.ts');
    expect(graph.get('listeners/deps.ts')).toContain('access.ts');
    expect(graph.size).toBeGreaterThan(80);
  });

  it('has no import cycle, type imports included', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const looped = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(cycles(looped)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('has no import cycle between folders', () => {
    expect(cycles(unitGraph(graph))).toEqual([]);
  });

  it('lays out folders whole: every entry of LAYERS is a folder or a top-level file of src/, once', () => {
    const entries = LAYERS.flat();
    expect(entries.filter((entry) => unitOf(entry) !== entry)).toEqual([]);
    expect(new Set(entries).size).toBe(entries.length);
    const units = new Set([...graph.keys()].map(unitOf));
    expect(entries.filter((entry) => !units.has(entry))).toEqual([]);
  });

  it('imports from no folder in a higher layer', () => {
    const upward = [...unitGraph(graph)].flatMap(([unit, targets]) =>
      targets.filter((target) => layerOf(target) > layerOf(unit)).map((target) => `${unit} → ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it('finds a cycle between folders when their files make none', () => {
    const crossed = new Map([
      ['a/one.ts', ['b/one.ts']],
      ['b/one.ts', []],
      ['b/two.ts', ['a/two.ts']],
      ['a/two.ts', []],
      ['c.ts', ['a/one.ts']],
    ]);
    expect(cycles(crossed)).toEqual([]);
    expect(cycles(unitGraph(crossed))).toEqual([['a/', 'b/']]);
  });

  it('imports only from its own layer or below: nothing runs back up', () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => layerOf(target) > layerOf(file)).map((target) => `${file} → ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it('keeps views free of Slack’s transport and of the listeners', () => {
    const views = [...graph].filter(([file]) => file.startsWith('views/'));
    for (const [file, targets] of views)
      for (const target of targets)
        expect(target, file).not.toMatch(
          /^(listeners|pipeline|http|installations|slack\/(poster|people|response-url))/,
        );
  });

  /** Every file under src/ with its text, relative to src/. */
  const texts = () => sources(SRC).map((path) => [relative(SRC, path), readFileSync(path, 'utf8')] as const);

  it('names the installation everywhere: nothing falls back to the one workspace when it is not given', () => {
    // A parameter's default (`installation = ONE_WORKSPACE`) or a fallback (`?? ONE_WORKSPACE`).
    const fallback = /(?:[\w)\]]\s*=(?!=)|\?\?)\s*ONE_WORKSPACE\b/;
    const found = texts().flatMap(([file, text]) =>
      text
        .split('\n')
        .flatMap((line, i) => (fallback.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
    expect(fallback.test('function f(installation = ONE_WORKSPACE) {')).toBe(true);
    expect(fallback.test('const id = deps.installation ?? ONE_WORKSPACE;')).toBe(true);
    expect(fallback.test('if (installation === ONE_WORKSPACE) return;')).toBe(false);
  });

  it('keeps one installation’s queries and the queries across installations apart: a `…Queries` factory needs its installation', () => {
    const factories = texts().flatMap(([file, text]) =>
      [...text.matchAll(/export function (\w+Queries)\(([^)]*)\)/g)].map((m) => ({
        where: `${file} ${m[1]}`,
        params: m[2] ?? '',
      })),
    );
    expect(factories.map((f) => f.where)).toEqual(
      expect.arrayContaining(['watches/queries.ts watchQueries', 'feed/queries.ts feedQueries']),
    );
    for (const { where, params } of factories)
      expect(params, where).toMatch(/\binstallation: InstallationId\b/);
  });

  it('makes an InstallationId in one place: no file but its constructor’s casts to the brand', () => {
    // `as InstallationId`, or the same cast through `unknown` or a union (`as InstallationId | undefined`).
    const cast = /\bas\s+(?:unknown\s+as\s+)?InstallationId\b/;
    const found = texts().flatMap(([file, text]) =>
      file === BRAND_FILE
        ? []
        : text
            .split('\n')
            .flatMap((line, i) => (cast.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
    expect(texts().find(([file]) => file === BRAND_FILE)?.[1]).toMatch(cast);
    expect(cast.test('const id = row.team as InstallationId;')).toBe(true);
    expect(cast.test('return (raw as unknown as InstallationId);')).toBe(true);
    expect(cast.test('const ids = raws as InstallationId[];')).toBe(true);
    expect(cast.test('function f(id: InstallationId): InstallationId {')).toBe(false);
  });
  /**
   * Where a lease column may be named outside the runner: the schema and its migrations define
   * them, and the store's open releases a dead process's leases on SQLite (under the file's lock,
   * before any runner starts).
   */
  const LEASE_COLUMNS_ALLOWED = new Set(['store/schema.ts', 'store/migrations.ts', 'store/database.ts']);
  /** A lease statement's mark: a lease column, or a lease condition written by hand. */
  const leaseStatement = /\blease_(?:owner|until)\b|\bleaseFree\b/;

  it('leaves the lease protocol to the runner: no job claims, renews, fences or lets go of a lease in SQL of its own', () => {
    const outside = texts().flatMap(([file, text]) =>
      file.startsWith('runner/') || LEASE_COLUMNS_ALLOWED.has(file)
        ? []
        : text
            .split('\n')
            .flatMap((line, i) => (leaseStatement.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(outside).toEqual([]);
    // What it finds: a claim's lease, a fence, a hand-written lease condition.
    expect(leaseStatement.test('.set({ lease_owner: owner, lease_until: now + leaseMs })')).toBe(true);
    expect(leaseStatement.test(".where('lease_owner', '=', owner)")).toBe(true);
    expect(leaseStatement.test(".where(leaseFree('w.lease_until', now))")).toBe(true);
    expect(leaseStatement.test("leasing(CHECKS, 'watched_invoices', chosen)")).toBe(false);
    // The runner's statements are there: what the rule protects is not an empty room.
    const runner = texts().filter(([file]) => file.startsWith('runner/'));
    expect(runner.filter(([, text]) => leaseStatement.test(text)).map(([file]) => file)).toEqual(
      expect.arrayContaining(['runner/leases.ts', 'runner/refresh-lease.ts']),
    );
  });
});
