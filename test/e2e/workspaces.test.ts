import { describe } from 'vitest';
import { installing, installingAgain, uninstalling } from './workspaces-installing.js';
import { eachReadsItsOwnMoney } from './workspaces-own-money.js';
import { beforeConnecting, connecting } from './workspaces-payment-account.js';
import { restartingWithKeys, stores, useWorkspacesStack } from './workspaces-stack.js';

/**
 * Many workspaces, end to end: the real bot (`node dist/main.js`) with an OAuth client and no bot
 * token, installed by two workspaces through /slack/install → /slack/oauth_redirect on the Slack
 * stand-in, with its installations in SQLite and in PostgreSQL.
 *
 * One scenario on one bot per store: each part builds on what the parts before it left (the
 * installs, the connected accounts, the watches), so the parts run in this order, in this file;
 * each lives in the module that names it.
 */
describe.each(Object.entries(stores))('many workspaces, on %s', (name, open) => {
  useWorkspacesStack(open);
  installing(name);
  beforeConnecting();
  connecting();
  installingAgain();
  eachReadsItsOwnMoney(name);
  uninstalling();
  restartingWithKeys();
});
