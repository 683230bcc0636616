import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { DropReason, OutboxBacklog } from './outbox.js';
import type { BreakerState, CallReport } from './payments/index.js';
import type { Outcome } from './pipeline/outcome.js';
import type { Kind } from './pipeline/tracked.js';
import type { SlackMethod } from './slack/calls.js';
import type { InstallationId } from './store/keys.js';

/**
 * Prometheus metrics, served at GET /metrics (docs/metrics.md). Every label value comes from a
 * closed set the code defines (kinds, listener and job names, outcomes, API methods): never a
 * person or free text, so the number of series stays bounded. The one id is the installation's,
 * in many-workspaces mode, on three `slackbot_installation_*` counters with few labels beside it:
 * bounded by the number of installations that did anything.
 */

export interface Metrics {
  readonly registry: Registry;
  /** `installation`: many workspaces, whose work it was ('' or none: the one workspace). */
  request(kind: Kind, name: string, outcome: Outcome, seconds: number, installation?: InstallationId): void;
  paymentCall(report: CallReport, installation?: InstallationId): void;
  /** `result`: `ok`, or why Slack did not take it (rate_limited, transient, not_in_channel, …). */
  slackCall(method: SlackMethod, result: string, installation?: InstallationId): void;
  /** How late a job's item started, in milliseconds (exported in seconds). */
  schedulerLag(job: string, lagMs: number): void;
  /** A message the outbox dropped, and why. */
  outboxDropped(reason: DropReason): void;
  /** Read at each scrape. */
  gauges(read: GaugeReaders): void;
  route(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export interface GaugeReaders {
  inflight: () => number;
  activeWatches: () => Promise<number>;
  /** Watch checks due more than a few seconds ago and not yet made. */
  overdueChecks: () => Promise<number>;
  /** Messages waiting to go out to Slack, and since when the oldest waits. */
  outbox: () => Promise<OutboxBacklog>;
  /** Now, on the bot's clock (epoch ms): the oldest message's age is measured against it. */
  now: () => number;
  /** The payment service's circuit breaker. */
  breaker: () => BreakerState;
  /** Statements this instance has sent to the database (src/store/database.ts). */
  statements: () => number;
}

/** The breaker's state as a number: 0 closed, 1 open, 2 half-open (a probe may go). */
const BREAKER_VALUES: Record<BreakerState, number> = { closed: 0, open: 1, half_open: 2 };

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'slackbot_' });
  const { requests, duration, payments, retries, slack, dropped, lag } = workMetrics(registry);
  const { installationWork, installationPayments, installationSlack } = installationCounters(registry);
  let readers: GaugeReaders | undefined;
  registerGauges(registry, () => readers);

  return {
    registry,
    request(kind, name, outcome, seconds, installation) {
      requests.inc({ kind, name, outcome });
      duration.observe({ kind }, seconds);
      if (installation) installationWork.inc({ installation, outcome });
    },
    paymentCall(report, installation) {
      const lane = report.background ? 'background' : 'interactive';
      payments.inc({ operation: report.operation, lane, result: report.result });
      if (report.attempts > 1) retries.inc({ operation: report.operation }, report.attempts - 1);
      if (installation) installationPayments.inc({ installation, lane, result: report.result });
    },
    slackCall(method, result, installation) {
      slack.inc({ method, result });
      if (installation) installationSlack.inc({ installation, result });
    },
    schedulerLag(job, lagMs) {
      lag.observe({ job }, lagMs / 1000);
    },
    outboxDropped(reason) {
      dropped.inc({ reason });
    },
    gauges(read) {
      readers = read;
    },
    async route(_req, res) {
      const body = await registry.metrics();
      res.writeHead(200, { 'content-type': registry.contentType }).end(body);
    },
  };
}

/** The counters and histograms of the work the bot does: requests and jobs, calls to both services, the outbox, the scheduler. */
function workMetrics(registry: Registry) {
  const requests = new Counter({
    name: 'slackbot_requests_total',
    help: 'Work handled: Slack requests (command, action, event, shortcut, function) and background jobs, by name and outcome.',
    labelNames: ['kind', 'name', 'outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'slackbot_request_duration_seconds',
    help: 'Time from receiving a request (or starting a job) to its last reply, by kind.',
    labelNames: ['kind'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 1.5, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const payments = new Counter({
    name: 'slackbot_payment_calls_total',
    help: 'Calls to the payment service by operation, lane and result (ok, timeout, service_unavailable, …).',
    labelNames: ['operation', 'lane', 'result'] as const,
    registers: [registry],
  });
  const retries = new Counter({
    name: 'slackbot_payment_retries_total',
    help: 'Attempts beyond the first made by calls to the payment service.',
    labelNames: ['operation'] as const,
    registers: [registry],
  });
  const slack = new Counter({
    name: 'slackbot_slack_calls_total',
    help: 'Web API calls and response_url posts the bot made, by method and result.',
    labelNames: ['method', 'result'] as const,
    registers: [registry],
  });
  const dropped = new Counter({
    name: 'slackbot_outbox_dropped_total',
    help: 'Messages the bot gave up on: Slack refused them for good, or failed for more than 24 hours.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const lag = new Histogram({
    name: 'slackbot_scheduler_lag_seconds',
    help: 'How late background work started after it fell due, by job.',
    labelNames: ['job'] as const,
    buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900],
    registers: [registry],
  });
  return { requests, duration, payments, retries, slack, dropped, lag };
}

/** Many workspaces: each installation's own share of the counters above. */
function installationCounters(registry: Registry) {
  const installationWork = new Counter({
    name: 'slackbot_installation_requests_total',
    help: 'Many workspaces: work handled for each installation (its requests and its background jobs), by outcome.',
    labelNames: ['installation', 'outcome'] as const,
    registers: [registry],
  });
  const installationPayments = new Counter({
    name: 'slackbot_installation_payment_calls_total',
    help: "Many workspaces: calls to the payment service with each installation's key, by lane and result.",
    labelNames: ['installation', 'lane', 'result'] as const,
    registers: [registry],
  });
  const installationSlack = new Counter({
    name: 'slackbot_installation_slack_calls_total',
    help: "Many workspaces: Web API calls made with each installation's token, by result.",
    labelNames: ['installation', 'result'] as const,
    registers: [registry],
  });
  return { installationWork, installationPayments, installationSlack };
}

/** The gauges, read at each scrape through `read`: zero until the bot gives its readers (`gauges`). */
function registerGauges(registry: Registry, read: () => GaugeReaders | undefined): void {
  new Gauge({
    name: 'slackbot_inflight',
    help: 'Requests and jobs being handled right now.',
    registers: [registry],
    collect() {
      this.set(read()?.inflight() ?? 0);
    },
  });
  new Gauge({
    name: 'slackbot_watches_active',
    help: 'Active invoice watches, all instances together.',
    registers: [registry],
    async collect() {
      const readers = read();
      this.set(readers ? await readers.activeWatches() : 0);
    },
  });
  new Gauge({
    name: 'slackbot_outbox_backlog',
    help: 'Messages decided and not yet delivered to Slack, all instances together.',
    registers: [registry],
    async collect() {
      const readers = read();
      this.set(readers ? (await readers.outbox()).pending : 0);
    },
  });
  new Gauge({
    name: 'slackbot_outbox_oldest_seconds',
    help: 'How long the oldest message not yet delivered to Slack has waited; 0 when none waits.',
    registers: [registry],
    async collect() {
      const readers = read();
      const oldestAt = readers ? (await readers.outbox()).oldestAt : undefined;
      this.set(readers && oldestAt !== undefined ? Math.max(0, readers.now() - oldestAt) / 1000 : 0);
    },
  });
  new Gauge({
    name: 'slackbot_watch_checks_overdue',
    help: 'Watch checks that fell due more than 5 seconds ago and have not been made: the background budget is short.',
    registers: [registry],
    async collect() {
      const readers = read();
      this.set(readers ? await readers.overdueChecks() : 0);
    },
  });

  new Counter({
    name: 'slackbot_db_statements_total',
    help: 'Statements this instance sent to the database, each one round trip (begin and commit included).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read()?.statements() ?? 0);
    },
  });
  new Gauge({
    name: 'slackbot_payment_breaker_state',
    help: "The payment service's circuit breaker: 0 closed, 1 open (calls fail at once, background work paused), 2 half-open (one probe may go).",
    registers: [registry],
    collect() {
      this.set(BREAKER_VALUES[read()?.breaker() ?? 'closed']);
    },
  });
}
