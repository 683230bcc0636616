import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  COMMAND_SCOPE,
  EVENT_SCOPES,
  EVENTS_PATH,
  MANY_WORKSPACES_EVENTS,
  METHOD_SCOPES,
  manifestOf,
  parseOptions,
  renderManifest,
  STEP_EVENT,
  UsageError,
} from '../scripts/manifest.js';
import { ACTION_REFRESH, SHORTCUT_CHECK_PAYMENT } from '../src/domain/actions.js';
import { COMMANDS } from '../src/domain/commands.js';
import { BOT_SCOPES, INSTALL_PATH, REDIRECT_PATH } from '../src/installations/oauth.js';
import { EVENTS, workspaceRoutes } from '../src/listeners/index.js';
import { INVOICE_ENTITY_TYPE } from '../src/views/invoice-entity.js';
import { ALL, type Manifest, nameOf, printed, ROOT, read, URL_BASE } from './support/manifests.js';

/**
 * The manifests `npm run manifest` prints (scripts/manifest.ts), checked against what the code
 * listens to and calls: read from src/ itself, not from the generator's lists.
 */

const SRC = join(ROOT, 'src');

interface SlashCommandEntry {
  command: string;
  description?: string;
  usage_hint?: string;
  url?: string;
  should_escape?: boolean;
}

/** The bot's own modules: not the demo's Slack nor the sandbox's payment service. */
function sources(dir = SRC): { file: string; text: string }[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    const file = relative(SRC, path);
    if (file === 'demo' || file === 'sandbox') return [];
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [{ file, text: readFileSync(path, 'utf8') }] : [];
  });
}

const FAMILIES =
  'admin|apps|assistant|auth|bookmarks|bots|calls|canvases|chat|conversations|dialog|dnd|emoji|entity|files|functions|oauth|openid|pins|reactions|reminders|search|stars|team|usergroups|users|views|workflows';

/** Web API methods a module calls (`client.chat.postMessage(`) or names as a call's label (`'users.info'`). */
function methodsIn(text: string): string[] {
  const calls = [...text.matchAll(new RegExp(`\\.(${FAMILIES})\\.(\\w+)\\s*\\(`, 'g'))];
  const labels = [...text.matchAll(new RegExp(`'(${FAMILIES})\\.(\\w+)'`, 'g'))];
  return [...calls, ...labels].map((m) => `${m[1]}.${m[2]}`);
}

/** Events a module registers a Bolt listener for, and whether it listens to messages. */
function listenersIn(text: string): { events: string[]; messages: boolean } {
  return {
    events: [...text.matchAll(/\bapp\.event\(\s*'(\w+)'/g)].map((m) => m[1] as string),
    messages: /\bapp\.message\(/.test(text),
  };
}

/** Event types the router sends to many workspaces' own routes (src/listeners/workspaces/routes.ts). */
const workspaceEvents = Object.keys(workspaceRoutes({} as never))
  .filter((key) => key.startsWith('event '))
  .map((key) => key.slice('event '.length));

const unique = <T>(items: T[]) => [...new Set(items)].sort();

const code = sources();
const calledMethods = unique(code.flatMap(({ text }) => methodsIn(text)));
const listening = code
  .map(({ file, text }) => ({ file, ...listenersIn(text) }))
  .filter((f) => f.events.length > 0 || f.messages);

describe('npm run manifest', () => {
  it('is the command package.json names', () => {
    expect(JSON.parse(read('package.json')).scripts.manifest).toBe('tsx scripts/manifest.ts');
  });

  it('keeps manifest.yml equal to its socket output, and manifest.workflow.yml to socket --workflow', () => {
    expect(read('manifest.yml')).toBe(renderManifest({ mode: 'socket' }));
    expect(read('manifest.workflow.yml')).toBe(renderManifest({ mode: 'socket', workflow: true }));
  });

  it('prints the manifest on stdout alone, and refuses bad arguments with exit 2 and a reason', () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'scripts/manifest.ts', ...args], {
        cwd: ROOT,
        encoding: 'utf8',
      });
    const ok = run('--mode', 'socket');
    expect(ok.status).toBe(0);
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toBe(read('manifest.yml'));

    const refused = run('--mode', 'http', '--url', 'http://bot.example.com');
    expect(refused.status).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('--url must start with https://');
    expect(refused.stderr).toContain('usage: npm run --silent manifest -- --mode socket|http|many');
  }, 30_000);

  it('refuses what Slack would refuse, or what would print a broken manifest, saying why', () => {
    const refusal = (argv: string[]) => {
      try {
        renderManifest(parseOptions(argv));
      } catch (error) {
        expect(error).toBeInstanceOf(UsageError);
        return (error as Error).message;
      }
      throw new Error(`accepted ${argv.join(' ')}`);
    };
    expect(refusal([])).toMatch(/--mode is required/);
    expect(refusal(['--mode', 'lambda'])).toMatch(/not one of socket, http, many/);
    expect(refusal(['--mode', 'socket', '--verbose'])).toMatch(/--verbose/);
    expect(refusal(['--mode', 'http'])).toMatch(/--mode http needs --url https:\/\//);
    expect(refusal(['--mode', 'many'])).toMatch(/--mode many needs --url/);
    expect(refusal(['--mode', 'socket', '--url', URL_BASE])).toMatch(/Socket Mode needs no public address/);
    for (const url of ['http://bot.example.com', 'http://localhost:3000', 'ws://bot.example.com'])
      expect(refusal(['--mode', 'http', '--url', url])).toMatch(/only to HTTPS URLs/);
    expect(refusal(['--mode', 'http', '--url', 'bot.example.com'])).toMatch(/is not a URL/);
    expect(refusal(['--mode', 'many', '--url', `${URL_BASE}/slack/events`])).toMatch(
      /address only \(https:\/\/bot\.example\.com\): the manifest adds \/slack\/events/,
    );
    expect(refusal(['--mode', 'http', '--url', `${URL_BASE}?x=1`])).toMatch(/address only/);
    expect(refusal(['--mode', 'http', '--url', 'https://me:pw@bot.example.com'])).toMatch(/user name/);
    expect(refusal(['--mode', 'socket', '--pay-url', 'pay.example.com'])).toMatch(
      /--pay-url .* is not a URL/,
    );
    expect(refusal(['--mode', 'socket', '--pay-url', 'https://[::1]/'])).toMatch(
      /cannot be an unfurl domain/,
    );
  });

  it('takes the address with a port or a trailing slash, and the payment links’ host from --pay-url', () => {
    const m = printed(parseOptions(['--mode', 'http', '--url', 'https://Bot.Example.com:8443/']));
    expect(m.settings.event_subscriptions.request_url).toBe('https://bot.example.com:8443/slack/events');
    expect(printed({ mode: 'socket' }).features.unfurl_domains).toEqual(['pay.example.com']);
    const pay = printed(parseOptions(['--mode', 'socket', '--pay-url', 'https://Pay.Acme.io/i/']));
    expect(pay.features.unfurl_domains).toEqual(['pay.acme.io']);
    expect(renderManifest({ mode: 'socket', payUrl: 'https://pay.acme.io' })).not.toContain(
      'pay.example.com',
    );
  });
});

describe('each way of running it', () => {
  it('Socket Mode: no URL anywhere, no redirect, no rotation (SLACK_BOT_TOKEN never changes)', () => {
    const m = printed({ mode: 'socket' });
    expect(m.settings.socket_mode_enabled).toBe(true);
    expect(JSON.stringify(m)).not.toMatch(/"(url|request_url|redirect_urls)"/);
    expect(m.settings.token_rotation_enabled).toBe(false);
  });

  it('HTTP mode: commands, clicks and events all go to <url>/slack/events; no redirect, no rotation', () => {
    const m = printed({ mode: 'http', url: URL_BASE });
    const endpoint = `${URL_BASE}${EVENTS_PATH}`;
    expect(m.settings.socket_mode_enabled).toBe(false);
    expect(m.features.slash_commands.map((c: SlashCommandEntry) => c.url)).toEqual(
      COMMANDS.map(() => endpoint),
    );
    expect(m.settings.interactivity).toEqual({ is_enabled: true, request_url: endpoint });
    expect(m.settings.event_subscriptions.request_url).toBe(endpoint);
    expect(m.oauth_config.redirect_urls).toBeUndefined();
    expect(m.settings.token_rotation_enabled).toBe(false);
  });

  it('many workspaces: HTTP plus the OAuth redirect, the uninstall events and token rotation', () => {
    const m = printed({ mode: 'many', url: URL_BASE });
    const http = printed({ mode: 'http', url: URL_BASE });
    expect(m.oauth_config.redirect_urls).toEqual([`${URL_BASE}${REDIRECT_PATH}`]);
    expect(m.settings.event_subscriptions.bot_events).toEqual([
      ...http.settings.event_subscriptions.bot_events,
      'app_uninstalled',
      'tokens_revoked',
    ]);
    expect(m.settings.token_rotation_enabled).toBe(true);
    expect(m.settings.socket_mode_enabled).toBe(false);
    expect(renderManifest({ mode: 'many', url: URL_BASE })).toContain(`${URL_BASE}${INSTALL_PATH}`);
  });

  it('differ only in what the mode changes: one source for the app itself', () => {
    const common = (m: Manifest) => {
      for (const c of m.features.slash_commands) delete c.url;
      delete m.oauth_config.redirect_urls;
      delete m.settings.event_subscriptions.request_url;
      delete m.settings.interactivity.request_url;
      m.settings.event_subscriptions.bot_events = m.settings.event_subscriptions.bot_events.filter(
        (e: string) => !(MANY_WORKSPACES_EVENTS as readonly string[]).includes(e),
      );
      delete m.settings.socket_mode_enabled;
      delete m.settings.token_rotation_enabled;
      return m;
    };
    const socket = common(printed({ mode: 'socket' }));
    expect(common(printed({ mode: 'http', url: URL_BASE }))).toEqual(socket);
    expect(common(printed({ mode: 'many', url: URL_BASE }))).toEqual(socket);
  });
});

describe('Work Objects (issue 41)', () => {
  it.each(ALL.map((o) => [nameOf(o), o] as const))(
    '%s turns them on: the invoice entity type, its panel event and interactivity',
    (_name, options) => {
      const m = printed(options);
      expect(m.features.rich_previews).toEqual({ is_active: true, entity_types: ['slack#/entities/item'] });
      expect(m.settings.event_subscriptions.bot_events).toContain('entity_details_requested');
      expect(m.settings.interactivity.is_enabled).toBe(true);
    },
  );

  it('declares the entity type the cards carry, and subscribes the event the panel listener routes', () => {
    expect(INVOICE_ENTITY_TYPE).toBe('slack#/entities/item');
    expect(EVENTS).toContain('entity_details_requested');
    expect(calledMethods).toContain('entity.presentDetails');
  });
});

describe('against the code', () => {
  it('finds the calls and listeners it checks (the scans themselves work)', () => {
    expect(methodsIn("await client.chat.postMessage({ channel }); call('users.info', f)")).toEqual([
      'chat.postMessage',
      'users.info',
    ]);
    expect(listenersIn("app.event('app_uninstalled', h); app.message(/hi/, h)")).toEqual({
      events: ['app_uninstalled'],
      messages: true,
    });
    expect(calledMethods).toEqual(expect.arrayContaining(['chat.postMessage', 'conversations.history']));
    expect(workspaceEvents).toContain('app_uninstalled');
  });

  it('has a scope entry for every Web API method src/ calls', () => {
    expect(calledMethods.filter((m) => !(m in METHOD_SCOPES))).toEqual([]);
  });

  it('asks for exactly the scopes those methods, the events and the commands need: no more, no fewer', () => {
    const allEvents = unique([...EVENTS, STEP_EVENT, ...MANY_WORKSPACES_EVENTS]);
    expect(allEvents.filter((e) => !(e in EVENT_SCOPES))).toEqual([]);
    const needed = unique([
      COMMAND_SCOPE,
      ...calledMethods.flatMap((m) => METHOD_SCOPES[m] ?? []),
      ...allEvents.flatMap((e) => EVENT_SCOPES[e] ?? []),
    ]);
    expect(unique([...BOT_SCOPES])).toEqual(needed);
    // The bot reads and asks about every kind of conversation it posts in: public and private
    // channels, DMs and group DMs.
    const kinds = ['channels', 'groups', 'im', 'mpim'];
    expect(METHOD_SCOPES['conversations.history']).toEqual(kinds.map((k) => `${k}:history`));
    expect(METHOD_SCOPES['conversations.replies']).toEqual(kinds.map((k) => `${k}:history`));
    expect(METHOD_SCOPES['conversations.info']).toEqual(kinds.map((k) => `${k}:read`));
    expect(BOT_SCOPES).toEqual(
      expect.arrayContaining(['channels:history', 'groups:history', 'im:history', 'mpim:history']),
    );
    for (const options of ALL)
      expect(printed(options).oauth_config.scopes.bot, nameOf(options)).toEqual([...BOT_SCOPES]);
  });

  it('subscribes to exactly the events the code listens to, in each mode', () => {
    // Every request goes through the one router: no Bolt listener of its own anywhere, and
    // nothing listens to messages (that would need message.* events and their history scopes).
    expect(listening).toEqual([]);
    // Many workspaces route the install's lifecycle besides every mode's EVENTS and the step's.
    expect(unique(workspaceEvents)).toEqual(unique([...MANY_WORKSPACES_EVENTS]));

    for (const options of ALL) {
      const expected = unique([
        ...EVENTS,
        ...(options.workflow ? [STEP_EVENT] : []),
        ...(options.mode === 'many' ? workspaceEvents : []),
      ]);
      expect(unique(printed(options).settings.event_subscriptions.bot_events), nameOf(options)).toEqual(
        expected,
      );
    }
  });

  it('declares the commands and the shortcut the code routes', () => {
    for (const options of ALL) {
      const m = printed(options);
      expect(m.features.slash_commands.map((c: SlashCommandEntry) => c.command)).toEqual([...COMMANDS]);
      expect(m.features.shortcuts).toEqual([
        expect.objectContaining({
          type: 'message',
          callback_id: SHORTCUT_CHECK_PAYMENT,
          name: 'Check payment status',
        }),
      ]);
      expect(m.features.app_home.home_tab_enabled).toBe(true);
    }
  });

  it(`enables interactivity, which the ${ACTION_REFRESH} button and the shortcut need`, () => {
    for (const options of ALL)
      expect(printed(options).settings.interactivity.is_enabled, nameOf(options)).toBe(true);
  });

  it('names only paths the bot serves', () => {
    // One assembly serves Slack's requests in both tenancies.
    expect(read('src/app.ts')).toContain(`'POST ${EVENTS_PATH}'`);
    const m = manifestOf({ mode: 'many', url: URL_BASE }) as Manifest;
    expect(m.oauth_config.redirect_urls).toEqual([`${URL_BASE}${REDIRECT_PATH}`]);
  });
});
