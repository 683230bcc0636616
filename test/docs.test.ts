import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PLACEHOLDERS } from '../src/config.js';
import { createMetrics } from '../src/metrics.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const envExample = readFileSync(new URL('../.env.example', import.meta.url), 'utf8');

describe('README and .env.example', () => {
  it.each([
    'request refused: signature mismatch',
    'request refused: stale',
    'request refused: from the future',
    'Slack rejected SLACK_BOT_TOKEN (invalid_auth)',
    'Slack rejected SLACK_APP_TOKEN (invalid_auth)',
  ])('quotes the log line "%s" as the bot writes it', (line) => {
    expect(readme).toContain(`\`${line}\``);
  });

  it('ships exactly the placeholders the configuration refuses', () => {
    for (const [name, value] of Object.entries(PLACEHOLDERS))
      expect(envExample).toContain(`${name}=${value}\n`);
  });

  it('documents every variable .env.example mentions', () => {
    const names = [...envExample.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]);
    for (const name of names) expect(readme).toContain(`\`${name}\``);
  });

  it('lists every metric the bot defines in the Metrics table', async () => {
    const names = (await createMetrics().registry.getMetricsAsJSON())
      .map((metric) => metric.name)
      .filter((name) => !/^slackbot_(process|nodejs)_/.test(name));
    expect(names.length).toBeGreaterThan(5);
    for (const name of names) expect(readme).toMatch(new RegExp(`^\\| \`${name}[{\`]`, 'm'));
  });

  it('states the Node lines package.json supports, and .nvmrc names the newest', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      engines: { node: string };
    };
    expect(pkg.engines.node).toBe('^20.11 || ^22 || ^24');
    expect(readme).toContain('Node.js 22 or 24');
    expect(readFileSync(new URL('../.nvmrc', import.meta.url), 'utf8').trim()).toBe('24');
  });

  it("shows in 'What it looks like' exactly what npm run preview prints today", () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/preview.ts'], {
      cwd: new URL('..', import.meta.url),
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    const section = /<!-- preview:start -->\n([\s\S]*?)<!-- preview:end -->/.exec(readme)?.[1];
    expect(section).toBe(run.stdout);
  });
});
