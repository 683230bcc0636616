import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ACTION_REFRESH } from '../src/views/invoice.js';

interface SlashCommandEntry {
  command: string;
  description?: string;
  usage_hint?: string;
  url?: string;
  should_escape?: boolean;
}

const manifest = parse(readFileSync(new URL('../manifest.yml', import.meta.url), 'utf8'));

describe('manifest.yml', () => {
  it('names the app within Slack’s 35 characters and gives the bot a display name', () => {
    expect(manifest.display_information.name.length).toBeGreaterThan(0);
    expect(manifest.display_information.name.length).toBeLessThanOrEqual(35);
    expect(manifest.features.bot_user.display_name).toBeTruthy();
  });

  it('declares both commands with descriptions and usage hints, and no URL in Socket Mode', () => {
    const commands: SlashCommandEntry[] = manifest.features.slash_commands;
    expect(commands.map((c) => c.command)).toEqual(['/balance', '/invoice']);
    for (const c of commands) {
      expect(c.description).toBeTruthy();
      expect(c.usage_hint).toBeTruthy();
      expect(c.url).toBeUndefined();
    }
    expect(manifest.settings.socket_mode_enabled).toBe(true);
  });

  it('asks for exactly the scopes the bot uses, and subscribes to link_shared', () => {
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual([
      'channels:history',
      'chat:write',
      'chat:write.public',
      'commands',
      'groups:history',
      'im:history',
      'links:read',
      'links:write',
    ]);
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(['link_shared']);
    const domains: string[] = manifest.features.unfurl_domains;
    expect(domains.length).toBeGreaterThanOrEqual(1);
    expect(domains.length).toBeLessThanOrEqual(5);
  });

  it(`enables interactivity, which the ${ACTION_REFRESH} button needs`, () => {
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(manifest.settings.token_rotation_enabled).toBe(false);
  });
});
