/**
 * `npm run --silent manifest -- --mode socket|http|many [--url https://host] [--pay-url URL] [--workflow]`
 * prints the Slack app manifest (YAML) for one way of running the bot:
 *
 * - `socket`: one workspace over Socket Mode; no URLs (this is manifest.yml);
 * - `http`: one workspace over HTTP; every request to `<url>/slack/events`;
 * - `many`: many workspaces (Add to Slack); as `http`, plus the OAuth redirect URL, the
 *   uninstall events and token rotation.
 *
 * `--workflow` adds the Workflow Builder step "Get invoice" (manifest.workflow.yml is
 * `--mode socket --workflow`; refused with `many`, since Slack distributes no app with custom
 * steps); `--pay-url` names PAYMENT_PAY_URL, whose host becomes the unfurl domain. Every mode is
 * org-ready (`org_deploy_enabled`), so an organisation can install the app org-wide. One source
 * for all of them: the commands, events, shortcut, step and scopes come from the code's own
 * lists; test/manifest.test.ts checks each output against what src/ listens to and calls, and
 * keeps manifest.yml and manifest.workflow.yml equal to this output; test/manifest-schema.test.ts
 * checks every manifest against the shape Slack documents.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Document, isMap, isScalar, isSeq, type Node } from 'yaml';
import { SHORTCUT_CHECK_PAYMENT } from '../src/domain/actions.js';
import { COMMANDS } from '../src/domain/commands.js';
import { BOT_SCOPES, INSTALL_PATH, REDIRECT_PATH } from '../src/installations/oauth.js';
import { FUNCTION_GET_INVOICE } from '../src/listeners/functions/get-invoice.js';
import { EVENTS, WORKSPACE_EVENTS } from '../src/listeners/index.js';
import { INVOICE_ENTITY_TYPE } from '../src/views/invoice-entity.js';
import {
  type BotScope,
  COMMAND_SCOPE,
  COMMAND_TEXT,
  EVENT_SCOPES,
  GET_INVOICE_STEP,
  METHOD_SCOPES,
  SCOPE_NOTES,
} from './manifest-parts.js';

export { COMMAND_SCOPE, EVENT_SCOPES, METHOD_SCOPES };

export const MODES = ['socket', 'http', 'many'] as const;
export type Mode = (typeof MODES)[number];

export interface ManifestOptions {
  mode: Mode;
  /** The bot's public address, `https://host[:port]`: required for `http` and `many`, refused for `socket`. */
  url?: string;
  /** PAYMENT_PAY_URL: its host is where payment links are unfurled. */
  payUrl?: string;
  /** With the Workflow Builder step "Get invoice" (and what a custom step needs). */
  workflow?: boolean;
}

/** Bad arguments: the message says what to give instead. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const USAGE =
  'usage: npm run --silent manifest -- --mode socket|http|many [--url https://host] [--pay-url URL] [--workflow]';

/** Where Slack sends every command, click and event in HTTP mode (both assemblies route it). */
export const EVENTS_PATH = '/slack/events';

/** Events only many-workspaces mode registers listeners for (src/listeners/workspaces/). */
export const MANY_WORKSPACES_EVENTS = WORKSPACE_EVENTS;

/** The event of a custom step: routed by src/listeners/routes.ts, subscribed only with the step. */
export const STEP_EVENT = 'function_executed';

/** The unfurl domain when `--pay-url` is not given: a placeholder to replace. */
export const PLACEHOLDER_PAY_HOST = 'pay.example.com';

/**
 * The bot's public address, checked: Slack sends requests only to HTTPS URLs, and the bot serves
 * its routes at the root, so only `https://host[:port]` is taken.
 */
export function baseUrl(given: string): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(
      `--url ${JSON.stringify(given)} is not a URL: give the bot's address, e.g. https://bot.example.com`,
    );
  }
  if (url.protocol !== 'https:')
    throw new UsageError(
      `--url must start with https:// (Slack sends requests only to HTTPS URLs), not ${url.protocol}//: put the bot behind TLS, or use --mode socket`,
    );
  if (url.username || url.password) throw new UsageError('--url must not carry a user name or password');
  if (url.search || url.hash || url.pathname !== '/')
    throw new UsageError(
      `--url takes the bot's address only (https://${url.host}): the manifest adds ${EVENTS_PATH} and ${REDIRECT_PATH} itself`,
    );
  return url.origin;
}

/** The unfurl domain from PAYMENT_PAY_URL: its host, as Slack's manifest takes it. */
export function payHost(given: string): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(
      `--pay-url ${JSON.stringify(given)} is not a URL: give PAYMENT_PAY_URL, e.g. https://pay.example.com`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UsageError('--pay-url must be an http(s) URL: the PAYMENT_PAY_URL of the bot');
  if (!/^(?![.-])[-a-z0-9.]+[a-z0-9]$/.test(url.hostname))
    throw new UsageError(
      `--pay-url's host ${url.hostname} cannot be an unfurl domain: Slack takes a domain name`,
    );
  return url.hostname;
}

/** The events a mode's manifest subscribes to: those the code listens to in that mode. */
export function eventsOf(options: Pick<ManifestOptions, 'mode' | 'workflow'>): string[] {
  return [
    ...EVENTS,
    ...(options.workflow ? [STEP_EVENT] : []),
    ...(options.mode === 'many' ? MANY_WORKSPACES_EVENTS : []),
  ];
}

/** The manifest as a plain object, in the order Slack's own examples use. */
export function manifestOf(options: ManifestOptions): Record<string, unknown> {
  const { mode, workflow = false } = options;
  if (mode === 'socket' && options.url !== undefined)
    throw new UsageError('--mode socket takes no --url: Socket Mode needs no public address');
  if (mode !== 'socket' && options.url === undefined)
    throw new UsageError(`--mode ${mode} needs --url https://<the bot's public host>`);
  if (mode === 'many' && workflow)
    throw new UsageError(
      '--mode many takes no --workflow: Slack does not distribute apps with custom steps to other workspaces (docs/slack.md#workflow-steps); print the step with --mode socket or --mode http for your own organisation',
    );
  const base = options.url === undefined ? undefined : baseUrl(options.url);
  const requestUrl = base === undefined ? {} : { request_url: `${base}${EVENTS_PATH}` };
  const host = options.payUrl === undefined ? PLACEHOLDER_PAY_HOST : payHost(options.payUrl);

  return {
    _metadata: { major_version: 1, minor_version: 1 },
    display_information: {
      name: 'Crypto Payments',
      description: 'Balance and invoice look-ups for merchants of the crypto payment service.',
      background_color: '#1f3a5f',
    },
    features: {
      app_home: { home_tab_enabled: true, messages_tab_enabled: true, messages_tab_read_only_enabled: true },
      bot_user: { display_name: 'Crypto Payments', always_online: false },
      shortcuts: [
        {
          name: 'Check payment status',
          type: 'message',
          callback_id: SHORTCUT_CHECK_PAYMENT,
          description: 'Looks up every invoice and payment link in the message, privately',
        },
      ],
      slash_commands: COMMANDS.map((command) => ({
        command,
        ...COMMAND_TEXT[command],
        ...(base === undefined ? {} : { url: `${base}${EVENTS_PATH}` }),
        should_escape: false,
      })),
      unfurl_domains: [host],
      // Invoices as Work Objects: their cards and side panels (docs/slack.md#work-objects).
      rich_previews: { is_active: true, entity_types: [INVOICE_ENTITY_TYPE] },
    },
    oauth_config: {
      ...(mode === 'many' ? { redirect_urls: [`${base}${REDIRECT_PATH}`] } : {}),
      scopes: { bot: [...BOT_SCOPES] },
    },
    settings: {
      event_subscriptions: { ...requestUrl, bot_events: eventsOf({ mode, workflow }) },
      interactivity: { is_enabled: true, ...requestUrl },
      // Org-ready in every mode: an organisation-wide install needs it, and custom steps too; a
      // standalone workspace installs the app as before (docs/slack.md#manifest).
      org_deploy_enabled: true,
      ...(workflow ? { function_runtime: 'remote' } : {}),
      socket_mode_enabled: mode === 'socket',
      token_rotation_enabled: mode === 'many',
    },
    ...(workflow ? { functions: { [FUNCTION_GET_INVOICE]: GET_INVOICE_STEP } } : {}),
  };
}

/** What to do with the manifest, for the person pasting it. */
function headerOf(options: ManifestOptions, base: string | undefined, placeholderHost: boolean): string {
  const command = [
    `npm run --silent manifest -- --mode ${options.mode}`,
    ...(options.url === undefined ? [] : [`--url ${base}`]),
    ...(options.payUrl === undefined ? [] : [`--pay-url ${options.payUrl}`]),
    ...(options.workflow ? ['--workflow'] : []),
  ].join(' ');
  const lines = [
    `Slack app manifest, printed by \`${command}\``,
    '(scripts/manifest.ts): change the script, not its output.',
    'Paste it into https://api.slack.com/apps → Create New App → From an app manifest.',
    '',
  ];
  if (options.mode === 'socket')
    lines.push(
      'Socket Mode, one workspace, no public URL: under Basic Information → App-Level Tokens create',
      'a token with the `connections:write` scope and set SLACK_APP_TOKEN; install the app and set',
      'SLACK_BOT_TOKEN. For HTTP mode or many workspaces, print the manifest with --mode http or',
      '--mode many instead.',
    );
  if (options.mode === 'http')
    lines.push(
      'HTTP mode, one workspace. Slack sends every command, click and event to',
      `  ${base}${EVENTS_PATH}`,
      'Set SLACK_SIGNING_SECRET (Basic Information → App Credentials) and SLACK_BOT_TOKEN, and',
      'leave SLACK_APP_TOKEN unset.',
    );
  if (options.mode === 'many')
    lines.push(
      'Many workspaces (Add to Slack), HTTP mode. Slack sends every command, click and event to',
      `  ${base}${EVENTS_PATH}`,
      'Set SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_SIGNING_SECRET (Basic Information → App',
      'Credentials), SLACK_STATE_SECRET and ENCRYPTION_KEY; leave SLACK_BOT_TOKEN and',
      'SLACK_APP_TOKEN unset. Turn on Manage Distribution; people install the app from',
      `  ${base}${INSTALL_PATH}`,
    );
  lines.push(
    '',
    'The app is org-ready (org_deploy_enabled): a standalone workspace installs it as usual; in an',
    'Enterprise Grid organisation an Org Admin can install it for the whole organisation',
    options.mode === 'many'
      ? '(through Add to Slack) and then add it to its workspaces.'
      : '(Install to Organization in its settings) and then add it to its workspaces.',
  );
  if (options.workflow)
    lines.push(
      '',
      'With the Workflow Builder step "Get invoice": custom steps need a paid plan or a developer',
      'sandbox; in an organisation, install the app at the organisation level for the step to show',
      'in Workflow Builder. On a free workspace, use the manifest without it (manifest.yml, or leave',
      'out --workflow).',
    );
  if (placeholderHost)
    lines.push(
      '',
      `Replace ${PLACEHOLDER_PAY_HOST} with the host of your payment links (PAYMENT_PAY_URL), or print`,
      'it with --pay-url; changing unfurl_domains later requires reinstalling the app.',
    );
  else lines.push('', 'Changing unfurl_domains later requires reinstalling the app.');
  return lines.map((line) => (line ? ` ${line}` : '')).join('\n');
}

const comment = (text: string) =>
  text
    .split('\n')
    .map((line) => ` ${line}`)
    .join('\n');

/** Writes `text` as a comment before the key `key` of the map at `path`. */
function noteKey(doc: Document, path: string[], key: string, text: string): void {
  const map = doc.getIn(path, true);
  if (!isMap(map)) throw new Error(`no map at ${path.join('.')}`);
  const pair = map.items.find((p) => isScalar(p.key) && p.key.value === key);
  if (!pair || !isScalar(pair.key)) throw new Error(`no ${key} at ${path.join('.')}`);
  pair.key.commentBefore = comment(text);
}

/** The manifest as YAML, with a header saying what to do with it and why each scope is asked for. */
export function renderManifest(options: ManifestOptions): string {
  const manifest = manifestOf(options);
  const doc = new Document(manifest);
  const base = options.url === undefined ? undefined : baseUrl(options.url);
  doc.commentBefore = headerOf(options, base, options.payUrl === undefined);

  const scopes = doc.getIn(['oauth_config', 'scopes', 'bot'], true);
  if (!isSeq(scopes)) throw new Error('no oauth_config.scopes.bot');
  for (const item of scopes.items as Node[]) {
    const note = isScalar(item) ? SCOPE_NOTES[item.value as BotScope] : undefined;
    if (note) item.commentBefore = comment(note);
  }
  noteKey(
    doc,
    ['features', 'app_home'],
    'messages_tab_enabled',
    options.mode === 'many'
      ? 'The bot writes here only to welcome the installer and to tell a subscriber their payments\nfeed stopped.'
      : 'The bot writes here only to tell a subscriber their payments feed stopped.',
  );
  if (options.mode === 'many') {
    noteKey(
      doc,
      ['settings', 'event_subscriptions'],
      'bot_events',
      'app_uninstalled: the bot deletes the installation, its tokens and its payment key;\ntokens_revoked: it forgets the revoked bot token.',
    );
    noteKey(
      doc,
      ['settings'],
      'token_rotation_enabled',
      'Bot tokens expire after 12 hours; the bot refreshes each before it does\n(src/installations/authorization.ts).',
    );
  }
  return doc.toString({ lineWidth: 0 });
}

/** The options from the command line (`process.argv.slice(2)`). */
export function parseOptions(argv: readonly string[]): ManifestOptions {
  let values: { mode?: string; url?: string; 'pay-url'?: string; workflow?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        mode: { type: 'string' },
        url: { type: 'string' },
        'pay-url': { type: 'string' },
        workflow: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const mode = values.mode;
  if (mode === undefined) throw new UsageError('--mode is required: socket, http or many');
  if (!(MODES as readonly string[]).includes(mode))
    throw new UsageError(`--mode ${JSON.stringify(mode)} is not one of socket, http, many`);
  return {
    mode: mode as Mode,
    ...(values.url === undefined ? {} : { url: values.url }),
    ...(values['pay-url'] === undefined ? {} : { payUrl: values['pay-url'] }),
    ...(values.workflow ? { workflow: true } : {}),
  };
}

/** Prints the manifest, or says what is wrong on stderr and exits 2. */
export function main(argv: readonly string[]): void {
  try {
    process.stdout.write(renderManifest(parseOptions(argv)));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`manifest: ${error.message}\n${USAGE}\n`);
    process.exitCode = 2;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
