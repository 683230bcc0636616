import type {
  AllMiddlewareArgs,
  BlockAction,
  SlackActionMiddlewareArgs,
  SlackViewMiddlewareArgs,
  ViewSubmitAction,
  webApi,
} from '@slack/bolt';
import type { Kysely } from 'kysely';
import { mayManageAccount, type Standing } from '../../access.js';
import { isPaymentError, type PaymentsClient } from '../../payments/index.js';
import type { Tracked, TrackingDeps } from '../../pipeline/tracked.js';
import type { InstallationSummary, Installations } from '../../store/installations.js';
import type { InstallationId } from '../../store/keys.js';
import type { Tables } from '../../store/schema.js';
import { errorTitle } from '../../views/errors.js';
import {
  type AccountManager,
  BLOCK_API_KEY,
  INPUT_API_KEY,
  keyProblems,
  notAllowedToConnectMessage,
  paymentAccountModal,
  workspaceHome,
} from '../../views/installation.js';
import type { CommandArgs } from '../args.js';

/** The request's installation, put in the context at authorization (src/installations/many.ts). */
export const installationOf = (context: AllMiddlewareArgs['context']): InstallationSummary =>
  context.installation as InstallationSummary;

export interface PaymentAccountDeps extends TrackingDeps {
  installations: Installations;
  /** A payments client for a key, sharing the service's breaker and connections. */
  paymentsFor: (apiKey: string, options: { timeoutMs: number; checking: true }) => PaymentsClient;
  clock: () => number;
  /** Publishes the person's App Home as their installation shows it now. */
  republish: (
    context: AllMiddlewareArgs['context'],
    installation: InstallationSummary,
    client: webApi.WebClient,
    userId: string,
  ) => Promise<void>;
  /** Ends an installation's watches in its Disconnect's transaction (src/watches/account.ts); how many. */
  endWatches: (trx: Kysely<Tables>, installation: InstallationId, now: number) => Promise<number>;
  /** Asks the outbox to deliver the ended watches' messages now. */
  wakeOutbox: () => void;
}

/** The key is checked within Slack's 3 s for answering a modal's submission. */
const KEY_CHECK_MS = 2000;

/** Who manages an installation's payment account, besides its admins and owners (installing again changes nobody). */
export const managerOf = (installation: InstallationSummary): AccountManager =>
  installation.account
    ? { userId: installation.account.connectedBy, connected: true }
    : { userId: installation.installerUserId, connected: false };

/** What `users.info` says of a person now (never kept: a demoted admin is refused at once). */
async function standingOf(client: webApi.WebClient, userId: string): Promise<Standing | undefined> {
  const { user } = await client.users.info({ user: userId });
  if (!user) return undefined;
  const grid = user.enterprise_user;
  return {
    teamId: user.team_id,
    enterpriseId: grid?.enterprise_id,
    workspaceAdmin: user.is_admin === true || user.is_owner === true,
    organisationAdmin: grid?.is_admin === true || grid?.is_owner === true,
    limited:
      user.deleted === true ||
      user.is_bot === true ||
      user.is_restricted === true ||
      user.is_ultra_restricted === true,
  };
}

/** Whether `userId` may connect, replace or disconnect the key (src/access.ts `mayManageAccount`). */
export async function mayManage(
  client: webApi.WebClient,
  installation: InstallationSummary,
  userId: string,
): Promise<boolean> {
  const account = {
    home: installation.home,
    enterpriseInstall: installation.enterpriseInstall,
    managerId: managerOf(installation).userId,
  };
  if (userId === account.managerId) return true;
  return mayManageAccount(account, userId, await standingOf(client, userId));
}

/** The App Home of an installation without a payment account: the account alone. */
export async function publishAccountHome(
  client: webApi.WebClient,
  installation: InstallationSummary,
  userId: string,
): Promise<void> {
  const canManage = await mayManage(client, installation, userId);
  const view = workspaceHome({
    installerId: installation.installerUserId,
    account: installation.account,
    canManage,
  });
  await client.views.publish({ user_id: userId, view });
}

/**
 * Opens the modal that takes the API key, for the people who may manage it; anyone else is told
 * privately who can. Used by the Home tab's button and by `/balance connect`.
 */
async function openPaymentAccountModal(
  client: webApi.WebClient,
  installation: InstallationSummary,
  userId: string,
  triggerId: string,
  refuse: (message: ReturnType<typeof notAllowedToConnectMessage>) => Promise<unknown>,
): Promise<void> {
  if (!(await mayManage(client, installation, userId))) {
    await refuse(notAllowedToConnectMessage(managerOf(installation)));
    return;
  }
  await client.views.open({
    trigger_id: triggerId,
    view: paymentAccountModal(installation.account !== undefined),
  });
}

/** Checks a key with `GET /api/v2/balance`: `undefined` when the service accepts it, else what to show under it. */
async function keyProblem(payments: PaymentsClient): Promise<string | undefined> {
  try {
    await payments.getBalance();
    return undefined;
  } catch (error) {
    if (isPaymentError(error) && error.code === 'invalid_api_key') return keyProblems.rejected;
    return keyProblems.unavailable(`${errorTitle(error)}.`);
  }
}

/** `/balance connect`: the same modal, for the same people; anyone else is told privately who can. */
export async function connectCommand({ ack, command, client, context, respond }: CommandArgs): Promise<void> {
  await ack();
  await openPaymentAccountModal(
    client,
    installationOf(context),
    command.user_id,
    command.trigger_id,
    (message) => respond({ response_type: 'ephemeral', ...message }),
  );
}

/** A click on the Home tab's Connect or Disconnect, as the router hands it over. */
type AccountClick = SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs;
/** The modal's submission, as the router hands it over. */
type AccountSubmission = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;

/** A change to the payment account refused: logged, and counted as not allowed. */
function refused(deps: TrackingDeps, what: string, installation: InstallationId, user: string) {
  deps.logger.warn({ installation, user }, `${what} refused: not its manager or an admin`);
  return { outcome: 'user_not_allowed' } as const;
}

/*
 * Connect payment account (Home tab): the modal, its submission (checked with the service
 * before anything is stored, by someone who may), and Disconnect: routes of the one list
 * (src/listeners/routes.ts), each logged, metered and waited for at a graceful stop.
 */

/** The Home tab's Connect (or Replace key): opens the modal for those who may. */
export function connectPaymentAccount(deps: PaymentAccountDeps) {
  return async ({ ack, body, client, context, respond }: AccountClick): Promise<Tracked> => {
    await ack();
    const installation = installationOf(context);
    let allowed = true;
    // The button is shown only to those who may use it; a click from the Home tab has no response_url.
    await openPaymentAccountModal(client, installation, body.user.id, body.trigger_id, async (message) => {
      allowed = false;
      if (body.response_url)
        await respond({ response_type: 'ephemeral', replace_original: false, ...message });
    });
    return allowed
      ? { outcome: 'ok' }
      : refused(deps, 'payment account button', installation.id, body.user.id);
  };
}

/** The Home tab's Disconnect: the key goes, and the installation's watches end with it. */
export function disconnectPaymentAccount(deps: PaymentAccountDeps) {
  return async ({ ack, body, client, context }: AccountClick): Promise<Tracked> => {
    await ack();
    const installation = installationOf(context);
    if (!(await mayManage(client, installation, body.user.id)))
      return refused(deps, 'payment account disconnect', installation.id, body.user.id);
    const now = deps.clock();
    let watches = 0;
    await deps.installations.disconnectPaymentKey(installation.id, now, async (trx) => {
      watches = await deps.endWatches(trx, installation.id, now);
    });
    deps.wakeOutbox();
    deps.logger.info(
      { installation: installation.id, by: body.user.id, watchesEnded: watches },
      'payment account disconnected',
    );
    await deps.republish(context, { ...installation, account: undefined }, client, body.user.id);
    return { outcome: 'ok' };
  };
}

/** The modal's submission: the key is checked with the service, then stored. */
export function submitPaymentKey(deps: PaymentAccountDeps) {
  return async ({ ack, body, view, client, context }: AccountSubmission): Promise<Tracked> => {
    const installation = installationOf(context);
    const userId = body.user.id;
    const errors = (message: string) =>
      ack({ response_action: 'errors', errors: { [BLOCK_API_KEY]: message } });
    if (!(await mayManage(client, installation, userId))) {
      await errors(keyProblems.notAllowed);
      return refused(deps, 'payment key', installation.id, userId);
    }
    const apiKey = view.state.values[BLOCK_API_KEY]?.[INPUT_API_KEY]?.value?.trim() ?? '';
    const checked = deps.paymentsFor(apiKey, { timeoutMs: KEY_CHECK_MS, checking: true });
    const problem = await keyProblem(checked).finally(() => checked.close?.());
    if (problem) {
      await errors(problem);
      return { outcome: 'invalid_input' };
    }
    const at = deps.clock();
    await deps.installations.connectPaymentKey(installation.id, apiKey, userId, at);
    await ack();
    deps.logger.info({ installation: installation.id, by: userId }, 'payment account connected');
    const account = { connectedBy: userId, connectedAt: at };
    await deps.republish(context, { ...installation, account }, client, userId);
    return { outcome: 'ok' };
  };
}
