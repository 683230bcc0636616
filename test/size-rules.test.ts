import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The size rules the code keeps, checked so they hold without anyone remembering them: no file
 * in src/, test/ or bench/ over 400 lines, and no function in src/ or bench/ with more than 80
 * lines of code of its own (test/ is not held to that one: some of its functions are longer).
 * A function's own lines are the lines of its body that hold code (not blank, not only a
 * comment), less those of the functions written inside it, which are held to the rule each by
 * itself: a factory that returns ten closures is eleven functions, not one long one. (No unused
 * export: knip, `npm run lint:unused`.)
 */

const ROOT = join(import.meta.dirname, '..');
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;
/** Where each rule holds. */
const FILE_RULE_DIRS = ['src', 'test', 'bench'];
const FUNCTION_RULE_DIRS = ['src', 'bench'];
const named = (dirs: string[]) => dirs.map((dir) => `${dir}/`).join(', ');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') || name.endsWith('.mjs'))
    .map((name) => join(dir, name));
}

const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** Lines that hold code: not blank, not only a comment. */
function codeLines(source: string): Set<number> {
  const code = new Set<number>();
  source.split('\n').forEach((text, line) => {
    const trimmed = text.trim();
    if (trimmed !== '' && !/^(\/\/|\/\*|\*)/.test(trimmed)) code.add(line);
  });
  return code;
}

/** Every function with a body in `source`, with the number of lines of code of its own. */
function functionSizes(file: string, source: string): { where: string; lines: number }[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const lineOf = (position: number) => sf.getLineAndCharacterOfPosition(position).line;
  const code = codeLines(source);
  const sizes: { where: string; lines: number }[] = [];
  const visit = (node: ts.Node, enclosing: Set<number> | undefined) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = lineOf(node.body.getStart(sf));
      const last = lineOf(node.body.end);
      const own = new Set<number>();
      for (let line = first; line <= last; line += 1) if (code.has(line)) own.add(line);
      // A function written inside another is held to the rule by itself: its inner lines are not
      // the other's (its first and last are, as they sit in the other's code).
      for (let line = first + 1; line < last; line += 1) enclosing?.delete(line);
      ts.forEachChild(node, (child) => visit(child, own));
      sizes.push({ where: `${file}:${lineOf(node.getStart(sf)) + 1}`, lines: own.size });
      return;
    }
    ts.forEachChild(node, (child) => visit(child, enclosing));
  };
  visit(sf, undefined);
  return sizes;
}

describe('a function’s own lines', () => {
  const statements = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');

  it('count the lines of code of its body, not blank lines or comments', () => {
    const source = `function f() {\n${statements(3)}\n\n  // why\n  /* and\n   * how */\n}\n`;
    expect(functionSizes('x.ts', source)).toEqual([{ where: 'x.ts:1', lines: 5 }]);
  });

  it('leave out the functions written inside it, which are held to the rule each by itself', () => {
    const source = `function outer() {\n${statements(50)}\n  const inner = () => {\n${statements(90)}\n  };\n}\n`;
    expect(functionSizes('x.ts', source)).toEqual([
      { where: 'x.ts:52', lines: 92 },
      { where: 'x.ts:1', lines: 54 },
    ]);
  });
});

describe('the size rules', () => {
  it(`keeps every file in ${named(FILE_RULE_DIRS)} within ${MAX_FILE_LINES} lines`, () => {
    const long = FILE_RULE_DIRS.flatMap(sources)
      .map((file) => ({ file, lines: lineCount(readFileSync(join(ROOT, file), 'utf8')) }))
      .filter(({ lines }) => lines > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });

  it(`keeps every function in ${named(FUNCTION_RULE_DIRS)} within ${MAX_FUNCTION_LINES} lines of code of its own`, () => {
    const long = FUNCTION_RULE_DIRS.flatMap(sources).flatMap((file) =>
      functionSizes(file, readFileSync(join(ROOT, file), 'utf8')).filter(
        ({ lines }) => lines > MAX_FUNCTION_LINES,
      ),
    );
    expect(long).toEqual([]);
  });
});
