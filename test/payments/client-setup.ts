import type { PaymentError } from '../../src/payments/index.js';
import { useSandboxClient } from '../support/sandbox-client.js';

/** Set-up shared by the payments client's test files (client-*.test.ts). */

/** Retries fast enough for a test: two, a few milliseconds apart. */
export const FAST_RETRY = { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20 };

/** One sandbox payment service for the file, and clients of it that retry fast. */
export const useFastRetryService = () => useSandboxClient({ retry: FAST_RETRY });

/** The rejection of `promise`, or a failed test if it resolved. */
export async function failure(promise: Promise<unknown>): Promise<PaymentError> {
  try {
    await promise;
  } catch (error) {
    return error as PaymentError;
  }
  throw new Error('expected the call to fail');
}
