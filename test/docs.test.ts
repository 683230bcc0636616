import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PLACEHOLDERS } from '../src/config.js';
import { createMetrics } from '../src/metrics.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (name: string) => readFileSync(join(ROOT, name), 'utf8');

const readme = read('README.md');
const envExample = read('.env.example');
/** The Markdown pages: the README, then every page under docs/. */
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** A page's text without its fenced code blocks and inline code, where `](…)` is not a link. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');

/** The anchors GitHub gives a page: one per heading (its slug, numbered when repeated) and each `<a id>`. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of text.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const slug = (heading as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const [, id] of text.matchAll(/<a id="([^"]+)"><\/a>/g)) anchors.add(id as string);
  return anchors;
}

/** Every relative link target on a page: `[text](target)`, images included, web addresses left out. */
const relativeLinks = (text: string) =>
  [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] as string)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));

describe('README and .env.example', () => {
  it('ships exactly the placeholders the configuration refuses', () => {
    for (const [name, value] of Object.entries(PLACEHOLDERS))
      expect(envExample).toContain(`${name}=${value}\n`);
  });

  it("documents every variable .env.example mentions in the README's configuration table", () => {
    const names = [...envExample.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]);
    expect(names.length).toBeGreaterThan(20);
    for (const name of names) expect(readme).toMatch(new RegExp(`^\\| \`${name}\` \\|`, 'm'));
  });

  it('states the Node lines package.json supports, and .nvmrc names the newest', () => {
    const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe('^20.11 || ^22 || ^24');
    expect(readme).toContain('Node.js 22 or 24');
    expect(read('.nvmrc').trim()).toBe('24');
  });

  it("gives in 'The two commands' the install and test commands .ci/run runs", () => {
    const section = /^## The two commands\n\n```sh\n([\s\S]*?)```/m.exec(readme)?.[1] ?? '';
    expect(section).toMatch(/^npm ci && npm start +#/m);
    expect(section).toMatch(/^npm ci && npm test +#/m);
    const ci = read('.ci/run');
    expect(ci).toMatch(/^\s*npm ci\b.*\n\s*npm test$/m);
  });

  it('stays short: at most 300 lines, linking every page under docs/', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    for (const page of PAGES.slice(1)) expect(readme).toContain(`](${page})`);
  });
});

describe('docs/', () => {
  it.each([
    'request refused: signature mismatch',
    'request refused: stale',
    'request refused: from the future',
    'Slack rejected SLACK_BOT_TOKEN (invalid_auth)',
    'Slack rejected SLACK_APP_TOKEN (invalid_auth)',
  ])('quotes the log line "%s" as the bot writes it, in operating.md', (line) => {
    expect(read('docs/operating.md')).toContain(`\`${line}\``);
  });

  it('lists every metric the bot defines in the tables of metrics.md', async () => {
    const metrics = read('docs/metrics.md');
    const names = (await createMetrics().registry.getMetricsAsJSON())
      .map((metric) => metric.name)
      .filter((name) => !/^slackbot_(process|nodejs)_/.test(name));
    expect(names.length).toBeGreaterThan(5);
    for (const name of names) expect(metrics).toMatch(new RegExp(`^\\| \`${name}[{\`]`, 'm'));
  });

  it('keeps the heading the key rotation errors send people to', () => {
    expect(read('docs/many-workspaces.md')).toMatch(/^## Rotating `ENCRYPTION_KEY`$/m);
  });

  it("shows in docs/previews.md ('What it looks like') exactly what npm run preview prints today", () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/preview.ts'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    const section = /<!-- preview:start -->\n([\s\S]*?)<!-- preview:end -->/.exec(
      read('docs/previews.md'),
    )?.[1];
    expect(section).toBe(run.stdout);
    expect(readme).not.toContain('<!-- preview:start -->');
  });

  it.each(PAGES)('%s links only to files that exist, and to headings they have', (page) => {
    const broken: string[] = [];
    for (const target of relativeLinks(read(page))) {
      const [path = '', anchor] = target.split('#');
      const file = path === '' ? page : relative(ROOT, join(ROOT, dirname(page), decodeURIComponent(path)));
      if (file.startsWith('..') || !existsSync(join(ROOT, file))) broken.push(`${target}: no file ${file}`);
      else if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(read(file)).has(anchor))
        broken.push(`${target}: no heading #${anchor} in ${file}`);
    }
    expect(broken).toEqual([]);
  });
});
