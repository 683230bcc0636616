import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PLACEHOLDERS } from '../src/config.js';

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
});
