import { describe, expect, it } from 'vitest';
import { createMetrics } from '../src/metrics.js';
import type { BreakerState } from '../src/payments/index.js';
import { installationId } from '../src/store/keys.js';

const scrape = async (metrics: ReturnType<typeof createMetrics>) => metrics.registry.metrics();

describe('metrics', () => {
  it('counts work by kind, name and outcome, and times it by kind', async () => {
    const metrics = createMetrics();
    metrics.request('command', '/invoice', 'ok', 0.03);
    metrics.request('command', '/invoice', 'ok', 0.04);
    metrics.request('job', 'watch_poll', 'unchanged', 0.2);
    const text = await scrape(metrics);
    expect(text).toContain('slackbot_requests_total{kind="command",name="/invoice",outcome="ok"} 2');
    expect(text).toContain('slackbot_requests_total{kind="job",name="watch_poll",outcome="unchanged"} 1');
    expect(text).toContain('slackbot_request_duration_seconds_count{kind="command"} 2');
    expect(text).toContain('slackbot_request_duration_seconds_bucket{le="0.05",kind="command"} 2');
  });

  it('counts each installation’s work, payment calls and Slack calls apart, and the one workspace’s not', async () => {
    const metrics = createMetrics();
    metrics.request('command', '/balance', 'ok', 0.03, installationId('T0ONE'));
    metrics.request('job', 'watch_poll', 'unchanged', 0.2, installationId('T0ONE'));
    metrics.request('command', '/balance', 'ok', 0.03, installationId('T0TWO'));
    metrics.request('command', '/balance', 'ok', 0.03, installationId(''));
    metrics.request('command', '/balance', 'ok', 0.03);
    metrics.paymentCall(
      { operation: 'balance', result: 'ok', background: true, attempts: 1, ms: 20 },
      installationId('T0TWO'),
    );
    metrics.paymentCall({ operation: 'balance', result: 'ok', background: false, attempts: 1, ms: 20 });
    metrics.slackCall('chat.postMessage', 'ok', installationId('T0ONE'));
    metrics.slackCall('chat.postMessage', 'ok');
    const text = await scrape(metrics);
    expect(text).toContain('slackbot_requests_total{kind="command",name="/balance",outcome="ok"} 4');
    expect(text).toContain('slackbot_installation_requests_total{installation="T0ONE",outcome="ok"} 1');
    expect(text).toContain(
      'slackbot_installation_requests_total{installation="T0ONE",outcome="unchanged"} 1',
    );
    expect(text).toContain('slackbot_installation_requests_total{installation="T0TWO",outcome="ok"} 1');
    expect(text).toContain(
      'slackbot_installation_payment_calls_total{installation="T0TWO",lane="background",result="ok"} 1',
    );
    expect(text).toContain('slackbot_installation_slack_calls_total{installation="T0ONE",result="ok"} 1');
    expect(text).toContain('slackbot_slack_calls_total{method="chat.postMessage",result="ok"} 2');
    expect(text).not.toContain('installation=""');
    expect(text.match(/^slackbot_installation_\w+\{/gm)).toHaveLength(5);
  });

  it('counts payment calls by operation, lane and result, and the retries they took', async () => {
    const metrics = createMetrics();
    metrics.paymentCall({ operation: 'invoice', result: 'ok', background: false, attempts: 1, ms: 20 });
    metrics.paymentCall({ operation: 'invoice', result: 'timeout', background: true, attempts: 3, ms: 8000 });
    const text = await scrape(metrics);
    expect(text).toContain(
      'slackbot_payment_calls_total{operation="invoice",lane="interactive",result="ok"} 1',
    );
    expect(text).toContain(
      'slackbot_payment_calls_total{operation="invoice",lane="background",result="timeout"} 1',
    );
    expect(text).toContain('slackbot_payment_retries_total{operation="invoice"} 2');
    metrics.paymentCall({ operation: 'balance', result: 'ok', background: false, attempts: 1, ms: 20 });
    expect(await scrape(metrics)).not.toContain('slackbot_payment_retries_total{operation="balance"}');
  });

  it('counts Slack calls, scheduler lag, and reads the gauges at each scrape', async () => {
    const metrics = createMetrics();
    let watches = 3;
    let statements = 12;
    let backlog: { pending: number; oldestAt: number | undefined } = { pending: 0, oldestAt: undefined };
    metrics.gauges({
      inflight: () => 2,
      activeWatches: async () => watches,
      overdueChecks: async () => 7,
      breaker: () => 'closed',
      outbox: async () => backlog,
      now: () => 10_000_000,
      statements: () => statements,
    });
    expect(await scrape(metrics)).toContain('slackbot_outbox_oldest_seconds 0\n');
    backlog = { pending: 5, oldestAt: 10_000_000 - 7_200_000 };
    metrics.slackCall('chat.postMessage', 'rate_limited');
    metrics.schedulerLag('watch_poll', 1500);
    metrics.outboxDropped('not_in_channel');
    let text = await scrape(metrics);
    expect(text).toContain('slackbot_outbox_backlog 5');
    expect(text).toContain('slackbot_outbox_oldest_seconds 7200');
    expect(text).toContain('slackbot_outbox_dropped_total{reason="not_in_channel"} 1');
    expect(text).toContain('slackbot_slack_calls_total{method="chat.postMessage",result="rate_limited"} 1');
    expect(text).toContain('slackbot_scheduler_lag_seconds_bucket{le="2",job="watch_poll"} 1');
    expect(text).toContain('slackbot_inflight 2');
    expect(text).toContain('slackbot_watches_active 3');
    expect(text).toContain('slackbot_watch_checks_overdue 7');
    expect(text).toContain('slackbot_db_statements_total 12\n');
    watches = 4;
    statements = 20;
    text = await scrape(metrics);
    expect(text).toContain('slackbot_watches_active 4');
    expect(text).toContain('slackbot_db_statements_total 20\n');
    expect(text).toContain('slackbot_process_cpu_seconds_total');
  });

  it('reads the payment breaker’s state at each scrape: 0 closed, 1 open, 2 half-open', async () => {
    const metrics = createMetrics();
    let breaker: BreakerState = 'closed';
    metrics.gauges({
      inflight: () => 0,
      activeWatches: async () => 0,
      overdueChecks: async () => 0,
      breaker: () => breaker,
      outbox: async () => ({ pending: 0, oldestAt: undefined }),
      now: () => 0,
      statements: () => 0,
    });
    expect(await scrape(metrics)).toContain('slackbot_payment_breaker_state 0');
    breaker = 'open';
    expect(await scrape(metrics)).toContain('slackbot_payment_breaker_state 1');
    breaker = 'half_open';
    expect(await scrape(metrics)).toContain('slackbot_payment_breaker_state 2');
  });

  it('serves Prometheus text on its route', async () => {
    const metrics = createMetrics();
    let status = 0;
    let contentType = '';
    let body = '';
    const res = {
      writeHead(code: number, headers: Record<string, string>) {
        status = code;
        contentType = headers['content-type'] ?? '';
        return res;
      },
      end(text: string) {
        body = text;
      },
    };
    await metrics.route({} as never, res as never);
    expect(status).toBe(200);
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(body).toContain('# HELP slackbot_requests_total');
  });
});
