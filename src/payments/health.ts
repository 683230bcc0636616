import type { BreakerState, CircuitBreaker } from './breaker.js';
import type { PaymentErrorCode } from './errors.js';

export type CallResult = 'ok' | PaymentErrorCode;

/** One call to the payment service, as the client reports it (metrics and the App Home read these). */
export interface CallReport {
  operation: 'balance' | 'invoice';
  result: CallResult;
  background: boolean;
  /** Attempts made, 1 when there was no retry. */
  attempts: number;
  ms: number;
}

/** What the App Home says of the payment service: when it last answered well, and the last trouble. */
export interface HealthSnapshot {
  lastSuccess: { at: Date; operation: CallReport['operation'] } | undefined;
  lastProblem: { at: Date; result: Exclude<CallResult, 'ok'> } | undefined;
  /** The service's circuit breaker now: `open` while the service is not answering. */
  breaker: BreakerState;
}

/** Problems that say something about the service or its key (not a person's unknown invoice id). */
const SERVICE_PROBLEMS: ReadonlySet<CallResult> = new Set([
  'invalid_api_key',
  'service_unavailable',
  'timeout',
  'rate_limited',
  'unexpected_response',
  'service_error',
]);

/** Remembers the last good call and the last service problem this instance saw, beside the breaker's state. */
export function createHealth(breaker: Pick<CircuitBreaker, 'state'>, clock: () => number = Date.now) {
  let lastSuccess: HealthSnapshot['lastSuccess'];
  let lastProblem: HealthSnapshot['lastProblem'];
  return {
    record(report: CallReport): void {
      const at = new Date(clock());
      if (report.result === 'ok') lastSuccess = { at, operation: report.operation };
      else if (SERVICE_PROBLEMS.has(report.result))
        lastProblem = { at, result: report.result as Exclude<CallResult, 'ok'> };
    },
    snapshot: (): HealthSnapshot => ({ lastSuccess, lastProblem, breaker: breaker.state() }),
  };
}

export type Health = ReturnType<typeof createHealth>;
