import { expect } from 'vitest';
import { num } from '../../src/sandbox/data.js';
import { useWorkspacesBot, type Workspace, workspace } from '../support/workspaces-bot.js';

/**
 * Set-up shared by the payment account's test files (payment-account-*.test.ts): the payment
 * account of a workspace of many, in the bot assembled as src/main.ts does (the Home tab's Connect
 * and Disconnect, `/balance connect`, the modal that takes the key, who may do any of it —
 * users.info, asked each time — and what people see before and after). `many` is a live binding,
 * set by `usePaymentAccountBot()`.
 */

export let many: ReturnType<typeof useWorkspacesBot>;

/** Registers the file's bot of many workspaces; call once, at the top of a test file. */
export function usePaymentAccountBot(): void {
  many = useWorkspacesBot();
}

/** A merchant of the sandbox with its own key and money, which no other key reads. */
let merchants = 0;
export function merchant(currency = 'Monero'): string {
  merchants += 1;
  const key = `merchant-${merchants}-unit-key-${currency.toLowerCase()}-7d6c5b4a`;
  many.bot.sandbox.addMerchant(key, {
    balances: [{ id: currency.slice(0, 3).toUpperCase(), title: currency, balance: num('77.7777') }],
    invoices: [],
  });
  return key;
}

/** Installs a fresh workspace; its installer is a plain member of it in Slack's directory. */
export async function installed(name: string): Promise<Workspace> {
  const w = workspace(name);
  many.bot.slack.people.set(w.installer, { team_id: w.team });
  const page = await many.bot.install(w);
  expect(page.status).toBe(200);
  return w;
}

/** Someone of workspace `w` as users.info describes them. */
export function person(w: Workspace, id: string, fields: Record<string, unknown> = {}): string {
  many.bot.slack.people.set(id, { team_id: w.team, ...fields });
  return id;
}

export const text = (value: unknown) => JSON.stringify(value);
export const modalsSince = (n: number) => many.bot.slack.modals.slice(n);
export const calls = (method: string, from = 0) =>
  many.bot.slack.calls.slice(from).filter((c) => c.method === method);
