import { describe, expect, it } from 'vitest';
import {
  addToSlackPage,
  installFailedPage,
  notConnectedMessage,
  paymentAccountModal,
  welcomeMessage,
  workspaceHome,
} from '../../src/views/installation.js';
import { blockKitProblems, visibleText } from '../support/block-kit.js';

const AT = Date.UTC(2026, 10, 21, 12);

describe('what a workspace of a many-workspaces app sees', () => {
  it('says who can connect the payment account', () => {
    const before = notConnectedMessage('U0INSTALLER');
    expect(visibleText(before)).toContain('not connected');
    expect(visibleText(before)).toContain('<@U0INSTALLER>');
    for (const message of [before, welcomeMessage('U0INSTALLER')])
      expect(blockKitProblems(message)).toEqual([]);
  });

  it('shows the buttons on the Home tab only to those who may manage the account', () => {
    const shown = (canManage: boolean, connected: boolean) =>
      JSON.stringify(
        workspaceHome({
          installerId: 'U0INSTALLER',
          account: connected ? { connectedBy: 'U0ADMIN', connectedAt: AT } : undefined,
          canManage,
        }),
      );
    expect(shown(true, false)).toContain('connect_payment_account');
    expect(shown(true, true)).toContain('disconnect_payment_account');
    expect(shown(true, true)).toContain('Replace key');
    expect(shown(false, false)).not.toContain('connect_payment_account');
    expect(shown(false, true)).not.toContain('_payment_account"');
    expect(shown(false, true)).toContain('Connected by <@U0ADMIN>');
  });

  it('asks for the key in the block and input the submission reads', () => {
    const modal = paymentAccountModal(false);
    expect(modal.callback_id).toBe('payment_account');
    expect(modal.blocks[1]).toMatchObject({
      type: 'input',
      block_id: 'api_key',
      element: { type: 'plain_text_input', action_id: 'api_key' },
    });
    expect(JSON.stringify(paymentAccountModal(true))).toContain('Replace');
  });

  it('shows Slack’s Add to Slack button drawn in the page itself, loading nothing from another host', () => {
    const html = addToSlackPage('https://slack.com/oauth/v2/authorize?client_id=1');
    expect(html).toMatch(
      /<a id="add-to-slack" href="https:\/\/slack\.com\/oauth\/v2\/authorize\?client_id=1" style="[^"]+">/,
    );
    expect(html).toContain('<svg');
    expect(html).toContain('Add to <b>Slack</b></a>');
    expect(html).not.toMatch(/\bsrc=|url\(|<link|<script/);
  });

  it('escapes what it puts in its pages', () => {
    expect(addToSlackPage('https://slack.com/oauth/v2/authorize?a=1&state="x"<y>')).toContain(
      'href="https://slack.com/oauth/v2/authorize?a=1&amp;state=&quot;x&quot;&lt;y&gt;"',
    );
    const failed = installFailedPage('/slack/install', 'Cancelled <b>now</b>.');
    expect(failed).toContain('Cancelled &lt;b&gt;now&lt;/b&gt;.');
    expect(failed).toContain('href="/slack/install"');
  });
});
