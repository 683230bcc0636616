import type { ActionsBlock } from '@slack/types';
import { describe, expect, it } from 'vitest';
import { paymentAccountModal, welcomeMessage, workspaceHome } from '../../src/views/installation.js';
import { blockKitProblems, HOME_VIEW, visibleText } from '../support/block-kit.js';

/** Slack's longest modal title, submit and close label. */
const MODAL_LABEL_MAX = 24;

describe('the payment account modal, word for word', () => {
  it.each([
    [false, 'Connect payment account'],
    [true, 'Replace the API key'],
  ])(
    'replacing %s: titled "%s", with Connect and Cancel, each short enough for Slack',
    (replacing, title) => {
      const modal = paymentAccountModal(replacing);
      const labels = { title: modal.title.text, submit: modal.submit?.text, close: modal.close?.text };
      expect(labels).toEqual({ title, submit: 'Connect', close: 'Cancel' });
      for (const label of Object.values(labels)) expect(label?.length).toBeLessThanOrEqual(MODAL_LABEL_MAX);
      expect(blockKitProblems({ blocks: modal.blocks }, { requireText: false })).toEqual([]);
      expect(visibleText(modal)).toBe(
        'Paste the API key of any active project of your merchant account. The bot checks it with the payment service before keeping it, encrypted; nobody sees it again, in Slack or in the logs.\nAPI key',
      );
    },
  );
});

describe('the installer’s welcome, word for word', () => {
  it('says what the app shows and how an invoice is asked for, then the next step', () => {
    const message = welcomeMessage('U0INSTALLER');
    expect(blockKitProblems(message)).toEqual([]);
    expect(visibleText(message)).toBe(
      [
        ':wave: Thanks for installing *Crypto Payments*, <@U0INSTALLER>.',
        'It shows your payment service balance (`/balance`) and invoices (`/invoice &lt;id or link&gt;`, pasted payment links, *Check payment status* on any message) right in Slack, to the people allowed to see them.',
        '*Next step:* connect your payment account from the app’s *Home* tab (only you and workspace admins or owners can). Until then the bot answers that it is not connected yet.',
      ].join('\n'),
    );
  });
});

describe('the payment account on the Home tab, as read', () => {
  const home = (connected: boolean, canManage: boolean) =>
    workspaceHome({
      installerId: 'U0INSTALLER',
      account: connected ? { connectedBy: 'U0ADMIN', connectedAt: Date.UTC(2026, 10, 21, 12) } : undefined,
      canManage,
    });
  /** Each button as a person sees it, with what it does. */
  const buttons = (connected: boolean, canManage: boolean) =>
    home(connected, canManage)
      .blocks.filter((b): b is ActionsBlock => b.type === 'actions')
      .flatMap((b) => b.elements.map((e) => [e.type === 'button' ? e.text.text : e.type, e.action_id]));
  const PRIVACY = 'Each workspace connects its own account; no other workspace can read it.';

  it('offers Replace key and Disconnect once connected, Connect payment account before', () => {
    expect(buttons(true, true)).toEqual([
      ['Replace key', 'connect_payment_account'],
      ['Disconnect', 'disconnect_payment_account'],
    ]);
    expect(buttons(false, true)).toEqual([['Connect payment account', 'connect_payment_account']]);
  });

  it('ends with who can read the account, for those who manage it and those who do not', () => {
    for (const [connected, canManage] of [
      [true, true],
      [false, false],
    ] as const) {
      const view = home(connected, canManage);
      expect(blockKitProblems(view, HOME_VIEW)).toEqual([]);
      expect(visibleText(view).split('\n').at(-1)).toBe(PRIVACY);
    }
  });
});
