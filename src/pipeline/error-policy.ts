import { AccessDeniedError } from '../access.js';
import type { Logger } from '../logger.js';
import { type InvoiceId, isPaymentError } from '../payments/index.js';
import { slackWasBusy } from '../slack/calls.js';
import { errorMessage } from '../views/errors.js';
import type { Outcome } from './outcome.js';
import type { Reply } from './reply.js';

/**
 * The outcome a failure is logged under: a payment error's or refusal's code, `slack_busy`, else
 * `internal_error`.
 */
export function outcomeOf(error: unknown): Outcome {
  if (isPaymentError(error) || error instanceof AccessDeniedError) return error.code;
  return slackWasBusy(error) ? 'slack_busy' : 'internal_error';
}

/**
 * What an operator should see in the logs beyond the request line: a failing payment service,
 * or Slack too busy to take a post, as a warning with its details (status, schema issues); a
 * bug as an error with its stack.
 * Nothing for what the person caused (an unknown invoice id) or was refused: the request
 * line says it all.
 */
export function reportFailure(logger: Logger, error: unknown): void {
  if (isPaymentError(error)) {
    if (error.code !== 'invoice_not_found') logger.warn({ err: error }, error.message);
  } else if (slackWasBusy(error)) {
    logger.warn({ err: error }, 'Slack did not take the message');
  } else if (!(error instanceof AccessDeniedError)) {
    logger.error({ err: error }, 'request failed');
  }
}

interface SettleContext {
  /** Prefixes the error's title, e.g. "Could not refresh the invoice". */
  intro?: string;
  /** The invoice the work was about, kept in the reply when it fails. */
  invoiceId?: InvoiceId;
}

/** Runs `work` and turns any failure into an ephemeral reply explaining it. Never rejects. */
export async function settle(
  logger: Logger,
  work: () => Promise<Reply>,
  context: SettleContext = {},
): Promise<Reply> {
  try {
    return await work();
  } catch (error) {
    reportFailure(logger, error);
    return {
      message: errorMessage(error, context.intro),
      visibility: 'ephemeral',
      outcome: outcomeOf(error),
      invoiceId: context.invoiceId,
    };
  }
}
