import type { HomeView, KnownBlock, ModalView } from '@slack/types';
import { ACTION_CONNECT, ACTION_DISCONNECT, VIEW_PAYMENT_ACCOUNT } from '../domain/actions.js';
import { actionButton, actions, context, fallbackText, header, type Message, section } from './blocks.js';
import { md, mention, slackDate } from './mrkdwn.js';

export const BLOCK_API_KEY = 'api_key';
export const INPUT_API_KEY = 'api_key';

/**
 * Who manages the payment account, besides the workspace's admins and owners: whoever connected
 * it, or while none is connected whoever first installed the app.
 */
export interface AccountManager {
  userId: string;
  connected: boolean;
}

/** Who connected the workspace's payment account, and when. */
interface ConnectedAccount {
  connectedBy: string;
  connectedAt: number;
}

/**
 * What a workspace sees of its installation (many-workspaces mode): the installer's welcome, the
 * answer every surface gives until the payment account is connected, and the pages of the
 * install flow in the browser.
 */

const whoConnects = (installerId: string) =>
  md`${mention(installerId)} (who installed the app) or a workspace admin or owner can connect it from the app’s *Home* tab.`;

/** Every surface, privately, until the workspace connects its payment account: who can connect it. */
export function notConnectedMessage(installerId: string): Message {
  const text = md`:electric_plug: *The payment account is not connected*\n${whoConnects(installerId)}`;
  return { text: fallbackText(text), blocks: [section(text)] };
}

/**
 * Stop on a card, or `/invoice unwatch`, once the payment account is not connected: every watch
 * ended with the Disconnect (one written after it ends at its first check), so there is nothing
 * left to stop, and the card says so once its last edit reaches Slack.
 */
export function watchesEndedMessage(installerId: string): Message {
  const text = md`Nothing is watched here: the payment account is not connected, and a Disconnect ends every watch with it. ${whoConnects(installerId)}`;
  return { text: fallbackText(text), blocks: [section(text)] };
}

/** The Workflow Builder step's one-line failure, for the workflow's author. */
export function stepNotConnected(): string {
  return 'The payment account is not connected: the installer or a workspace admin connects it from the app’s Home tab';
}

/** Someone who is neither the installer nor an admin or owner tried to manage the payment account. */
export function notAllowedToConnectMessage(manager: AccountManager): Message {
  const who = manager.connected ? 'who connected it' : 'who installed the app';
  const text = md`:lock: *Only the person ${who} (${mention(manager.userId)}) or a workspace admin or owner can connect or change the payment account.*`;
  return { text: fallbackText(text), blocks: [section(text)] };
}

/** The modal that takes the payment service API key; the key is never shown back. */
export function paymentAccountModal(replacing: boolean): ModalView {
  return {
    type: 'modal',
    callback_id: VIEW_PAYMENT_ACCOUNT,
    title: { type: 'plain_text', text: replacing ? 'Replace the API key' : 'Connect payment account' },
    submit: { type: 'plain_text', text: 'Connect' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      section(
        md`Paste the API key of any active project of your merchant account. The bot checks it with the payment service before keeping it, encrypted; nobody sees it again, in Slack or in the logs.`,
      ),
      {
        type: 'input',
        block_id: BLOCK_API_KEY,
        label: { type: 'plain_text', text: 'API key' },
        element: { type: 'plain_text_input', action_id: INPUT_API_KEY, min_length: 8, max_length: 500 },
      },
    ],
  };
}

/** What the modal says under the key when the service refused it or could not be asked. */
export const keyProblems = {
  rejected:
    'The payment service rejected this key. Copy it again from your merchant account: any active project’s key works.',
  notAllowed:
    'Only the person who connected the payment account (before that, who installed the app) or a workspace admin or owner can change it.',
  unavailable: (why: string) =>
    `The key could not be checked: ${why} Nothing was saved; try again in a minute.`,
} as const;

/** The installer's direct message right after the install. */
export function welcomeMessage(installerId: string): Message {
  const text = md`:wave: Thanks for installing *Crypto Payments*, ${mention(installerId)}.\nIt shows your payment service balance (\`/balance\`) and invoices (\`/invoice ${'<id or link>'}\`, pasted payment links, *Check payment status* on any message) right in Slack, to the people allowed to see them.`;
  const next = md`*Next step:* connect your payment account from the app’s *Home* tab (only you and workspace admins or owners can). Until then the bot answers that it is not connected yet.`;
  return { text: fallbackText(text), blocks: [section(text), section(next)] };
}

/**
 * To whoever ran Add to Slack again: the install was renewed and nothing was handed over; the
 * payment account stays with who manages it.
 */
export function reinstalledMessage(userId: string, manager: AccountManager): Message {
  const text = md`:wave: ${mention(userId)}, *Crypto Payments* was installed again in this workspace: its tokens are renewed and everything else stays as it was.`;
  const account = manager.connected
    ? md`The payment account stays connected, managed by ${mention(manager.userId)} and the workspace’s admins and owners.`
    : md`The payment account is not connected. ${whoConnects(manager.userId)}`;
  return { text: fallbackText(text), blocks: [section(text), section(account)] };
}

/** The payment account's state, and for the installer and admins the buttons to manage it. */
export function paymentAccountBlocks(input: {
  installerId: string;
  account: ConnectedAccount | undefined;
  canManage: boolean;
}): KnownBlock[] {
  const { account, canManage } = input;
  const state = account
    ? md`:white_check_mark: Connected by ${mention(account.connectedBy)} on ${slackDate(new Date(account.connectedAt))}. The key is kept encrypted and never shown.`
    : md`The payment account is not connected. ${whoConnects(input.installerId)}`;
  const buttons = account
    ? [
        actions(
          'payment_account',
          actionButton('Replace key', ACTION_CONNECT, 'replace'),
          actionButton('Disconnect', ACTION_DISCONNECT, 'disconnect'),
        ),
      ]
    : [actions('payment_account', actionButton('Connect payment account', ACTION_CONNECT, 'connect'))];
  return [
    header('Payment account'),
    section(state),
    ...(canManage ? buttons : []),
    context(md`Each workspace connects its own account; no other workspace can read it.`),
  ];
}

/** The App Home of a workspace whose payment account is not connected: only the account. */
export function workspaceHome(input: Parameters<typeof paymentAccountBlocks>[0]): HomeView {
  return { type: 'home', blocks: paymentAccountBlocks(input) };
}

const HTML_ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (raw: string) => raw.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c] ?? c);

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><meta name="viewport" content="width=device-width,initial-scale=1"></head><body style="font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;line-height:1.5"><h1>${escapeHtml(title)}</h1>${body}</body></html>`;

/**
 * Slack's Add to Slack button as Slack's own page draws it (white, a grey border, the mark and
 * "Add to Slack"), in inline CSS and SVG: the page loads nothing from another host.
 */
const ADD_TO_SLACK_STYLE =
  'display:inline-flex;align-items:center;gap:12px;padding:0 16px;height:48px;border:1px solid #ddd;border-radius:4px;background:#fff;color:#000;font-size:18px;font-weight:600;text-decoration:none';
/** Slack's mark, its four colours, drawn inline. */
const SLACK_MARK =
  '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20" viewBox="0 0 122.8 122.8" aria-hidden="true"><path d="M25.8 77.6a12.9 12.9 0 1 1-12.9-12.9h12.9zm6.5 0a12.9 12.9 0 0 1 25.8 0v32.3a12.9 12.9 0 1 1-25.8 0z" fill="#e01e5a"/><path d="M45.2 25.8a12.9 12.9 0 1 1 12.9-12.9v12.9zm0 6.5a12.9 12.9 0 0 1 0 25.8H12.9a12.9 12.9 0 0 1 0-25.8z" fill="#36c5f0"/><path d="M97 45.2a12.9 12.9 0 1 1 12.9 12.9H97zm-6.5 0a12.9 12.9 0 0 1-25.8 0V12.9a12.9 12.9 0 1 1 25.8 0z" fill="#2eb67d"/><path d="M77.6 97a12.9 12.9 0 1 1-12.9 12.9V97zm0-6.5a12.9 12.9 0 0 1 0-25.8h32.3a12.9 12.9 0 0 1 0 25.8z" fill="#ecb22e"/></svg>';

/** `GET /slack/install`: the Add to Slack button, to Slack's authorize page with a fresh state. */
export function addToSlackPage(authorizeUrl: string): string {
  return page(
    'Add Crypto Payments to Slack',
    `<p>Your workspace’s balance and invoices from the payment service, in Slack. After the install, connect your payment account from the app’s Home tab.</p><p><a id="add-to-slack" href="${escapeHtml(authorizeUrl)}" style="${ADD_TO_SLACK_STYLE}">${SLACK_MARK}Add to <b>Slack</b></a></p>`,
  );
}

/** The browser page after a successful install. */
export function installedPage(): string {
  return page(
    'Crypto Payments is installed',
    '<p>Open Slack: the app sent you a direct message. Connect your payment account from the app’s Home tab to start.</p>',
  );
}

/** The browser page after a refused or failed install: nothing was installed; how to try again. */
export function installFailedPage(installPath: string, reason: string): string {
  return page(
    'The app was not installed',
    `<p>${escapeHtml(reason)} Nothing was installed and nothing was changed.</p><p><a href="${escapeHtml(installPath)}">Start the install again</a> from this browser, and finish it within 10 minutes.</p>`,
  );
}
