/**
 * `npx tsx scripts/settings-table.ts`: writes the README's configuration table (between `<!-- settings:start -->`
 * and `<!-- settings:end -->`) from the one declaration of every setting, src/config/settings.ts.
 * test/config-registry.test.ts fails when the README's table is not what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Mode, SETTING_NAMES, settingOf } from '../src/config/settings.js';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const MARKERS = /(<!-- settings:start -->\n)[\s\S]*?(<!-- settings:end -->)/;

const MODE_LABELS: Record<Mode, string> = {
  http: 'one workspace over HTTP',
  socket: 'Socket Mode',
  many: 'many workspaces',
  demo: 'the demo',
};

/** Which modes read a setting, in words: "all", "one workspace", or the modes one by one. */
function readBy(modes: readonly Mode[]): string {
  const has = (mode: Mode) => modes.includes(mode);
  const words: string[] = [];
  if (has('http') && has('socket') && has('many')) words.push('every mode');
  else if (has('http') && has('socket')) words.push('one workspace');
  else words.push(...(['http', 'socket', 'many'] as const).filter(has).map((m) => MODE_LABELS[m]));
  if (has('demo')) words.push(MODE_LABELS.demo);
  return words.join(', ');
}

/** The README's configuration table: a row for each setting, in the order they are declared. */
export function settingsTable(): string {
  const rows = SETTING_NAMES.map((name) => {
    const setting = settingOf(name);
    const shown = setting.shown ?? (setting.default === undefined ? '' : `\`${String(setting.default)}\``);
    const cells = [`\`${name}\``, readBy(setting.reads), setting.required ? 'yes' : 'no', shown, setting.doc];
    return `| ${cells.join(' | ')} |`.replaceAll('|  |', '| |');
  });
  return ['| Variable | Read by | Required | Default | Meaning |', '|---|---|---|---|---|', ...rows, ''].join(
    '\n',
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const readme = readFileSync(README, 'utf8');
  if (!MARKERS.test(readme))
    throw new Error('README.md has no <!-- settings:start --> … <!-- settings:end -->');
  writeFileSync(
    README,
    readme.replace(MARKERS, (_all, start: string, end: string) => start + settingsTable() + end),
  );
}
