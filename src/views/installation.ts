import type { HomeView } from '@slack/types';
import { context, fallbackText, header, type Message, section } from './blocks.js';
import { md, mention } from './mrkdwn.js';

/**
 * What a workspace sees of its installation (many-workspaces mode): the installer's welcome, the
 * answer every surface gives until the payment account is connected, and the pages of the
 * install flow in the browser.
 */

const whoConnects = (installerId: string) =>
  md`${mention(installerId)} (who installed the app) or a workspace admin or owner can connect it from the app’s *Home* tab.`;

/** Every surface, privately, while the workspace has no payment account connected. */
export function notConnectedMessage(installerId: string): Message {
  const text = md`:electric_plug: *The payment account is not connected yet*\n${whoConnects(installerId)}`;
  return { text: fallbackText(text), blocks: [section(text)] };
}

/** The installer's direct message right after the install. */
export function welcomeMessage(installerId: string): Message {
  const text = md`:wave: Thanks for installing *Crypto Payments*, ${mention(installerId)}.\nIt shows your payment service balance (\`/balance\`) and invoices (\`/invoice <id or link>\`, pasted payment links, *Check payment status* on any message) right in Slack, to the people allowed to see them.`;
  const next = md`*Next step:* connect your payment account from the app’s *Home* tab (only you and workspace admins or owners can). Until then the bot answers that it is not connected yet.`;
  return { text: fallbackText(text), blocks: [section(text), section(next)] };
}

/** The App Home while the payment account is not connected. */
export function notConnectedHome(installerId: string): HomeView {
  return {
    type: 'home',
    blocks: [
      header('Payment account'),
      section(md`The payment account is not connected yet. ${whoConnects(installerId)}`),
      context(md`Balances, invoices and unfurls work once it is connected.`),
    ],
  };
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

/** `GET /slack/install`: the Add to Slack link, to Slack's authorize page with a fresh state. */
export function addToSlackPage(authorizeUrl: string): string {
  return page(
    'Add Crypto Payments to Slack',
    `<p>Your workspace’s balance and invoices from the payment service, in Slack. After the install, connect your payment account from the app’s Home tab.</p><p><a id="add-to-slack" href="${escapeHtml(authorizeUrl)}">Add to Slack</a></p>`,
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
