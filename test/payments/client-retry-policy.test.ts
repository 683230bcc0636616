import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/payments/answers.js';
import {
  createPaymentsClient,
  PaymentTimeoutError,
  ServiceUnavailableError,
} from '../../src/payments/index.js';
import { failure, useFastRetryService } from './client-setup.js';

/** The payments client's retry policy: Retry-After, backoff and the deadline, with its clock, dice and sleep replaced. */

const service = useFastRetryService();

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');
  it.each([
    ['120', 120_000],
    [' 0 ', 0],
    ['Sat, 21 Nov 2026 12:00:30 GMT', 30_000],
    ['Sat, 21 Nov 2026 11:00:00 GMT', 0], // a date in the past means "now"
    ['99999999999999999999', 6 * 3_600_000], // absurd waits are capped at six hours
    ['Fri, 31 Dec 9999 23:59:59 GMT', 6 * 3_600_000],
    ['21600', 6 * 3_600_000],
    ['21599', 21_599_000],
    ['soon', undefined],
    ['-5', undefined],
    [undefined, undefined],
  ])('reads %j as %s ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
});

describe('the retry policy, with its clock, dice and sleep replaced', () => {
  /** A world where time moves only when the client sleeps, and the dice always roll `roll`. */
  function world(roll = 0.5) {
    let now = 0;
    const sleeps: number[] = [];
    return {
      sleeps,
      environment: {
        random: () => roll,
        now: () => now,
        sleep: async (ms: number) => {
          sleeps.push(ms);
          now += ms;
        },
      },
    };
  }

  it('backs off by random × base × 2^n between attempts', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 }, 4);
    const w = world(0.5);
    await failure(
      service
        .client({
          retry: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 10_000 },
          retryEnvironment: w.environment,
        })
        .getBalance(),
    );
    expect(w.sleeps).toEqual([50, 100, 200]);
    expect(service.sandbox.requests).toHaveLength(4);
  });

  it('caps each backoff at maxDelayMs', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 }, 3);
    const w = world(0.999);
    await failure(
      service
        .client({
          retry: { maxRetries: 2, baseDelayMs: 1000, maxDelayMs: 1500 },
          retryEnvironment: w.environment,
          timeoutMs: 60_000,
        })
        .getBalance(),
    );
    expect(w.sleeps).toEqual([999, 1498.5]);
  });

  it('waits exactly what Retry-After asks when it fits the deadline', async () => {
    service.sandbox.failNext({ kind: 'status', status: 429, headers: { 'retry-after': '3' } });
    const w = world();
    await service.client({ retryEnvironment: w.environment, timeoutMs: 10_000 }).getBalance();
    expect(w.sleeps).toEqual([3000]);
  });

  it('retries a 429 without Retry-After with the ordinary backoff', async () => {
    service.sandbox.failNext({ kind: 'status', status: 429 });
    const w = world(0.25);
    await expect(
      service
        .client({
          retry: { maxRetries: 2, baseDelayMs: 40, maxDelayMs: 1000 },
          retryEnvironment: w.environment,
        })
        .getBalance(),
    ).resolves.toHaveLength(7);
    expect(w.sleeps).toEqual([10]);
    expect(service.sandbox.requests).toHaveLength(2);
  });

  it('makes one request and no sleep with maxRetries 0', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 });
    const w = world();
    const error = await failure(
      service
        .client({
          retry: { maxRetries: 0, baseDelayMs: 10, maxDelayMs: 10 },
          retryEnvironment: w.environment,
        })
        .getBalance(),
    );
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(w.sleeps).toEqual([]);
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it('ends the call with the last error when the next backoff would not fit the time left', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 }, 3);
    const w = world(0.5);
    // Backoffs of 300 and 600 fit the 1000 ms deadline; the third (1200) does not fit the 100 left.
    const error = await failure(
      service
        .client({
          retry: { maxRetries: 5, baseDelayMs: 600, maxDelayMs: 10_000 },
          retryEnvironment: w.environment,
          timeoutMs: 1000,
        })
        .getBalance(),
    );
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(w.sleeps).toEqual([300, 600]);
    expect(service.sandbox.requests).toHaveLength(3);
  });

  it('reports a timeout when the deadline passes during a backoff', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 });
    const error = await failure(
      service
        .client({
          timeoutMs: 100,
          retryEnvironment: {
            now: () => 0,
            random: () => 0.5,
            // A sleep that only the deadline ends.
            sleep: (_ms, signal) =>
              new Promise((_resolve, reject) => signal.addEventListener('abort', reject)),
          },
        })
        .getBalance(),
    );
    expect(error).toBeInstanceOf(PaymentTimeoutError);
    expect(error).toMatchObject({ timeoutMs: 100 });
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it('logs each retry as a warning with the attempt, code, status and delay', async () => {
    service.sandbox.failNext({ kind: 'status', status: 502 });
    const warnings: [object, string][] = [];
    const w = world(0.5);
    await service
      .client({
        retry: { maxRetries: 1, baseDelayMs: 100, maxDelayMs: 100 },
        retryEnvironment: w.environment,
        logger: { warn: (fields, message) => warnings.push([fields, message]) },
      })
      .getBalance();
    expect(warnings).toEqual([
      [
        { operation: 'balance', attempt: 1, code: 'service_unavailable', status: 502, delayMs: 50 },
        'payment service call failed, retrying',
      ],
    ]);
  });
});

describe('the default retry policy', () => {
  it('retries a 503 twice, with backoff of at most 200 ms then 400 ms', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 }, 2);
    const c = createPaymentsClient({
      baseUrl: service.sandbox.url,
      apiKey: service.sandbox.apiKey,
      dispatcher: service.pool,
      userAgent: 'payments-slack-bot/test',
      timeoutMs: 5000,
    });
    const started = performance.now();
    await c.getBalance();
    expect(service.sandbox.requests).toHaveLength(3);
    expect(performance.now() - started).toBeLessThan(1500);
  });
});
