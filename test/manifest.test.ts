import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BOT_SCOPES } from '../src/installations/oauth.js';
import { FUNCTION_GET_INVOICE } from '../src/listeners/functions/get-invoice.js';
import { ACTION_REFRESH } from '../src/views/invoice.js';
import { SHORTCUT_CHECK_PAYMENT } from '../src/views/shortcut.js';

interface SlashCommandEntry {
  command: string;
  description?: string;
  usage_hint?: string;
  url?: string;
  should_escape?: boolean;
}

const manifest = parse(readFileSync(new URL('../manifest.yml', import.meta.url), 'utf8'));
const workflow = parse(readFileSync(new URL('../manifest.workflow.yml', import.meta.url), 'utf8'));

describe('manifest.yml', () => {
  it('asks for the same bot scopes that Add to Slack asks for (many workspaces)', () => {
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual([...BOT_SCOPES].sort());
  });

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
      'channels:read',
      'chat:write',
      'chat:write.public',
      'commands',
      'groups:history',
      'groups:read',
      'im:history',
      'im:read',
      'links:read',
      'links:write',
      'mpim:read',
      'users:read',
    ]);
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(['link_shared', 'app_home_opened']);
    const domains: string[] = manifest.features.unfurl_domains;
    expect(domains.length).toBeGreaterThanOrEqual(1);
    expect(domains.length).toBeLessThanOrEqual(5);
  });

  it(`enables interactivity, which the ${ACTION_REFRESH} button needs`, () => {
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(manifest.settings.token_rotation_enabled).toBe(false);
  });

  it('offers the message shortcut and the App Home the bot handles', () => {
    expect(manifest.features.shortcuts).toEqual([
      expect.objectContaining({
        type: 'message',
        callback_id: SHORTCUT_CHECK_PAYMENT,
        name: 'Check payment status',
      }),
    ]);
    expect(manifest.features.app_home.home_tab_enabled).toBe(true);
    expect(manifest.settings.event_subscriptions.bot_events).toContain('app_home_opened');
  });

  it('stays installable on a free workspace: no org-level settings, no functions', () => {
    expect(manifest.settings.org_deploy_enabled).toBe(false);
    expect(manifest.functions).toBeUndefined();
    expect(manifest.settings.function_runtime).toBeUndefined();
  });
});

describe('manifest.workflow.yml', () => {
  it('is manifest.yml plus the Get invoice step and what a custom step needs, nothing else', () => {
    const { functions, settings, ...rest } = workflow;
    const { settings: baseSettings, ...baseRest } = manifest;
    expect(rest).toEqual(baseRest);
    const { function_runtime, org_deploy_enabled, event_subscriptions, ...otherSettings } = settings;
    const { org_deploy_enabled: _free, event_subscriptions: baseEvents, ...baseOther } = baseSettings;
    expect(otherSettings).toEqual(baseOther);
    expect(function_runtime).toBe('remote');
    expect(org_deploy_enabled).toBe(true);
    expect(event_subscriptions.bot_events).toEqual([...baseEvents.bot_events, 'function_executed']);
    expect(Object.keys(functions)).toEqual([FUNCTION_GET_INVOICE]);
  });

  it('declares the step’s input and exactly the outputs it completes with', () => {
    const step = workflow.functions[FUNCTION_GET_INVOICE];
    expect(step.title).toBe('Get invoice');
    expect(step.input_parameters.required).toEqual(['invoice']);
    expect(Object.keys(step.input_parameters.properties)).toEqual(['invoice']);
    expect(Object.keys(step.output_parameters.properties).sort()).toEqual(
      ['amount', 'currency', 'expires_at', 'link', 'pay_status', 'shop', 'status', 'title'].sort(),
    );
    expect(step.output_parameters.properties.expires_at.type).toBe('slack#/types/timestamp');
  });
});
