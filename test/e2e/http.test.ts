import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import {
  blockActionsBody,
  type CommandFields,
  commandBody,
  linkSharedBody,
  postToBot,
  type SignOptions,
  type SlackPostResult,
  signatureHeaders,
} from '../support/slack-requests.js';
import { SECRETS } from './harness.js';
import { useStack } from './use-stack.js';

/**
 * The started bot (HTTP mode), driven the way Slack drives it: signed form posts, real
 * response_urls, a Web API stand-in, and the sandbox payment service with faults on demand.
 */

const ACK_DEADLINE_MS = 3000;
const stack = useStack();
/** Everything the bot answered in acks, for the leak check. */
const ackBodies: string[] = [];

async function post(
  body: string,
  opts: SignOptions & { contentType?: string } = {},
): Promise<SlackPostResult> {
  const result = await postToBot(`${stack.bot.url}/slack/events`, body, SECRETS.signingSecret, opts);
  ackBodies.push(result.body);
  return result;
}

/** Sends a slash command; resolves with the ack and the reply the user ends up seeing. */
async function command(name: CommandFields['command'], text: string, fields: Partial<CommandFields> = {}) {
  const responseUrl = stack.slack.responseUrl();
  const ack = await post(commandBody({ command: name, text, response_url: responseUrl, ...fields }));
  expect(ack.status).toBe(200);
  expect(ack.ms).toBeLessThan(ACK_DEADLINE_MS);
  const reply = ack.body ? ack.json() : (await stack.slack.waitForPost(responseUrl)).body;
  return { ack, reply, via: ack.body ? 'ack' : 'response_url', responseUrl };
}

describe('/balance', () => {
  it('answers in the ack, ephemerally, with every currency digit for digit', async () => {
    const { reply, via } = await command('/balance', '');
    expect(via).toBe('ack');
    expect(reply.response_type).toBe('ephemeral');
    const text = visibleText(reply);
    for (const row of [
      '*Bitcoin*\n0.0123456 BTC',
      '*Tether (TRC-20)*\n1520.5 USDT-TRC20',
      '*Litecoin*\n0.0000001 LTC',
      '*Ethereum*\n0 ETH',
      '*Dogecoin*\n4200.75 DOGE',
    ]) {
      expect(text).toContain(row);
    }
    // zero balances last
    expect(text.indexOf('*Ethereum*\n0 ETH')).toBeGreaterThan(text.indexOf('*Dogecoin*\n4200.75 DOGE'));
    expect(stack.sandbox.requests.map((r) => r.path)).toEqual(['/api/v2/balance']);
  });

  it('explains itself on "help"', async () => {
    const { reply } = await command('/balance', 'help');
    expect(reply.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain('summed over all projects');
  });

  it('refuses a member of another workspace without calling the service', async () => {
    const { reply } = await command('/balance', '', { team_id: 'T0GUESTORG' });
    expect(reply.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain('only for members of this workspace');
    expect(stack.sandbox.requests).toHaveLength(0);
  });

  it('tells an admin to check PAYMENT_API_KEY when the service rejects the key', async () => {
    stack.sandbox.failNext({
      kind: 'status',
      status: 401,
      body: '{"status":401,"name":"UnauthorizedError","message":"shop not found","details":"check api key"}',
    });
    const { reply } = await command('/balance', '');
    expect(reply.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain('`PAYMENT_API_KEY`');
  });

  it('acks by 2 s and answers through the response_url when the service is slow', async () => {
    stack.sandbox.setLatency(2500);
    const { ack, reply, via } = await command('/balance', '');
    expect(via).toBe('response_url');
    expect(ack.ms).toBeLessThan(2200);
    expect(reply.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain('0.0123456 BTC');
  });
});

describe('/invoice', () => {
  const id = DEMO_INVOICE_IDS.open;

  it('shows the invoice in the channel with its payment-page and Refresh buttons', async () => {
    const { reply, via } = await command('/invoice', id);
    expect(via).toBe('ack');
    expect(reply.response_type).toBe('in_channel');
    const text = visibleText(reply);
    expect(text).toContain('Order #1042 — annual support plan');
    expect(text).toContain('*Amount*\n149.99 USDT');
    expect(JSON.stringify(reply)).toContain(`"url":"${stack.sandbox.payUrl}/pay/${id}"`);
    expect(JSON.stringify(reply)).toContain('"action_id":"refresh_invoice"');
  });

  it.each([
    ['an upper-case id with spaces', () => `  ${id.toUpperCase()} `],
    ['a pasted payment link', () => `${stack.sandbox.payUrl}/pay/${id}`],
    ['a payment link as Slack escapes it', () => `<${stack.sandbox.payUrl}/pay/${id}|pay>`],
  ])('accepts %s', async (_label, text) => {
    const { reply } = await command('/invoice', text());
    expect(reply.response_type).toBe('in_channel');
    expect(stack.sandbox.requests.map((r) => r.path)).toEqual([`/api/v2/invoice/${id}`]);
  });

  it.each([
    ['', 'Give an invoice id or paste a payment link'],
    ['help', 'shows one invoice'],
    ['where is my money?', '`where is my money?` is not an invoice id'],
    ['../balance', '`../balance` is not an invoice id'],
  ])('answers %j ephemerally without calling the service', async (text, phrase) => {
    const { reply, via } = await command('/invoice', text);
    expect(via).toBe('ack');
    expect(reply.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain(phrase);
    expect(stack.sandbox.requests).toHaveLength(0);
  });

  it('names the id when no invoice has it', async () => {
    const missing = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
    const { reply } = await command('/invoice', missing);
    expect(reply.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain(`no invoice \`${missing}\``);
  });

  it.each([
    ['answers 500', { kind: 'status' as const, status: 500 }, 1, 'The payment service is unavailable'],
    [
      'keeps answering 503',
      { kind: 'status' as const, status: 503 },
      3,
      'The payment service is unavailable',
    ],
    ['resets the connection', { kind: 'reset' as const }, 3, 'The payment service is unavailable'],
    ['answers HTML', { kind: 'html' as const }, 1, 'could not read'],
    [
      'rate-limits',
      { kind: 'status' as const, status: 429, headers: { 'retry-after': '300' } },
      1,
      'Try again in 5 minutes',
    ],
  ])('explains it ephemerally when the service %s', async (_label, fault, times, phrase) => {
    stack.sandbox.failNext(fault, times);
    const { reply } = await command('/invoice', id);
    expect(reply.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain(phrase);
  });

  it('acks within 3 s while the service hangs, then says it timed out', async () => {
    stack.sandbox.failNext({ kind: 'hang' });
    const { ack, reply, via } = await command('/invoice', id);
    expect(via).toBe('response_url');
    expect(ack.ms).toBeLessThan(2200);
    expect(reply.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain('did not answer in time');
  });

  it('tries the response_url again when Slack answers it with a 500', async () => {
    stack.sandbox.setLatency(1800);
    const responseUrl = stack.slack.responseUrl({ status: 500, failures: 1 });
    const ack = await post(commandBody({ command: '/invoice', text: id, response_url: responseUrl }));
    expect(ack.body).toBe('');
    const { body } = await stack.slack.waitForPost(responseUrl);
    expect(body.response_type).toBe('in_channel');
    expect(visibleText(body)).toContain('Order #1042');
  });

  it('keeps working when the response_url is dead', async () => {
    stack.sandbox.setLatency(1800);
    const dead = stack.slack.responseUrl({ status: 404 });
    const ack = await post(
      commandBody({ command: '/invoice', text: id, response_url: dead, user_id: 'U0DEADURL' }),
    );
    expect(ack.status).toBe(200);
    await expect
      .poll(() => stack.bot.logs().find((l) => l.user === 'U0DEADURL')?.delivery, { timeout: 5000 })
      .toBe('failed');
    stack.sandbox.setLatency(0);
    const { reply } = await command('/invoice', id);
    expect(reply.response_type).toBe('in_channel');
  });
});

describe('buttons', () => {
  it('Refresh acks at once and replaces the message with a fresh read, saying who refreshed it', async () => {
    const responseUrl = stack.slack.responseUrl();
    const ack = await post(
      blockActionsBody({ actionId: 'refresh_invoice', value: DEMO_INVOICE_IDS.paid, responseUrl }),
    );
    expect(ack.status).toBe(200);
    expect(ack.ms).toBeLessThan(ACK_DEADLINE_MS);
    const { body } = await stack.slack.waitForPost(responseUrl);
    expect(body.replace_original).toBe(true);
    expect(visibleText(body)).toContain('Order #1041 — hardware wallet');
    expect(visibleText(body)).toMatch(/refreshed <!date\^\d+\^[^>]+> by <@U0CLICKER>/);
  });

  it('a failed Refresh tells the clicker and leaves the message alone', async () => {
    stack.sandbox.failNext({ kind: 'status', status: 503 }, 3);
    const responseUrl = stack.slack.responseUrl();
    await post(blockActionsBody({ actionId: 'refresh_invoice', value: DEMO_INVOICE_IDS.open, responseUrl }));
    const { body } = await stack.slack.waitForPost(responseUrl);
    expect(body).toMatchObject({ replace_original: false, response_type: 'ephemeral' });
    expect(String(body.text)).toMatch(/^Could not refresh the invoice/);
  });

  it.each([
    ['Refresh', 'refresh_invoice'],
    ['Watch', 'watch_invoice'],
  ])(
    '%s carrying a value the bot did not write: "that button no longer works", privately, nothing else done',
    async (_label, actionId) => {
      const marker = `forged-${actionId}-7c2e`;
      const values = [42, true, { id: marker }, [marker], '', 'w-1', `${DEMO_INVOICE_IDS.open} x`, undefined];
      const postsBefore = stack.slack.calls.filter((c) => c.method === 'chat.postMessage').length;
      for (const value of values) {
        const responseUrl = stack.slack.responseUrl();
        const ack = await post(blockActionsBody({ actionId, value, responseUrl }));
        expect(ack.status).toBe(200);
        expect(ack.ms).toBeLessThan(ACK_DEADLINE_MS);
        const { body } = await stack.slack.waitForPost(responseUrl);
        expect(body).toMatchObject({ response_type: 'ephemeral', replace_original: false });
        expect(visibleText(body)).toBe(
          ':warning: *That button no longer works*\nRun `/invoice &lt;id&gt;` again for a fresh card.',
        );
      }
      expect(stack.sandbox.requests).toEqual([]);
      expect(stack.slack.calls.filter((c) => c.method === 'chat.postMessage')).toHaveLength(postsBefore);
      await expect
        .poll(
          () => stack.bot.logs().filter((l) => l.name === actionId && l.outcome === 'stale_button').length,
        )
        .toBe(values.length);
      const warnings = stack.bot
        .logs()
        .filter((l) => l.msg === 'a button value the bot did not write' && l.action === actionId);
      expect(warnings.map((l) => l.level)).toEqual(values.map(() => 'warn'));
      expect(stack.bot.output.join('\n')).not.toContain(marker);
    },
  );

  it('a click on "Open payment page" is acknowledged and nothing is posted', async () => {
    const responseUrl = stack.slack.responseUrl();
    const ack = await post(
      blockActionsBody({ actionId: 'open_payment_page', url: 'https://pay.example/x', responseUrl }),
    );
    expect(ack.status).toBe(200);
    await sleep(200);
    expect(stack.slack.posts.filter((p) => p.url === responseUrl)).toEqual([]);
  });
});

describe('link unfurls', () => {
  it('unfurls a pasted payment link into a compact card, keyed by the exact URL', async () => {
    const before = stack.slack.calls.length;
    const url = `${stack.sandbox.payUrl}/pay/${DEMO_INVOICE_IDS.expired}`;
    const ack = await post(linkSharedBody([url]), { contentType: 'application/json' });
    expect(ack.status).toBe(200);
    const call = await stack.slack.waitForCall('chat.unfurl');
    expect(stack.slack.calls.length).toBeGreaterThan(before);
    expect(call.args).toMatchObject({
      unfurl_id: 'C0SUPPORT.1700000000.000200.abc',
      source: 'conversations_history',
    });
    const unfurls = call.args.unfurls as Record<string, unknown>;
    expect(Object.keys(unfurls)).toEqual([url]);
    // A final invoice: its state in words, no expiry to count down, and no Watch to offer.
    const text = visibleText(unfurls[url]);
    expect(text).toContain('*Order #1039 — gift card*\nExpired · Not paid · 25 USD');
    expect(text).toContain('as sent: status `expired`');
    expect(text).not.toContain('Expiry');
    expect(text).not.toContain('(expired)');
    expect(JSON.stringify(unfurls[url])).not.toContain('watch_invoice');
  });

  it('leaves a link to no invoice, or a malformed one, alone', async () => {
    const unfurlsBefore = stack.slack.calls.filter((c) => c.method === 'chat.unfurl').length;
    const links = [
      `${stack.sandbox.payUrl}/pay/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee`,
      `${stack.sandbox.payUrl}/pay/%3Cscript%3E`,
    ];
    const ack = await post(linkSharedBody(links), { contentType: 'application/json' });
    expect(ack.status).toBe(200);
    await sleep(500);
    expect(stack.slack.calls.filter((c) => c.method === 'chat.unfurl')).toHaveLength(unfurlsBefore);
    expect(stack.sandbox.requests).toHaveLength(1);
  });
});

describe('request signing', () => {
  const body = () => commandBody({ command: '/balance', text: '', response_url: stack.slack.responseUrl() });

  it.each<[string, SignOptions]>([
    ['a wrong signature', { signature: `v0=${'0'.repeat(64)}` }],
    ['a malformed signature', { signature: 'v0=deadbeef' }],
    ['a signature made with another secret', { signature: 'other-secret' }],
    ['a timestamp six minutes old', { timestamp: Math.floor(Date.now() / 1000) - 360 }],
    ['a timestamp six minutes in the future', { timestamp: Math.floor(Date.now() / 1000) + 360 }],
    ['no signature', { signature: null }],
  ])('answers %s with 401 and calls nothing', async (_label, opts) => {
    const text = body();
    const signature =
      opts.signature === 'other-secret'
        ? signatureHeaders('not-the-signing-secret', text)['x-slack-signature']
        : opts.signature;
    const result = await post(text, { ...opts, signature });
    expect(result.status).toBe(401);
    await sleep(100);
    expect(stack.sandbox.requests).toHaveLength(0);
  });
});

describe('operations', () => {
  it('answers /healthz once ready', async () => {
    const response = await fetch(`${stack.bot.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it.each([
    ['payload=null', 'application/x-www-form-urlencoded'],
    ['null', 'application/json'],
  ])('answers a signed %s with 400 at once and keeps answering', async (body, contentType) => {
    const result = await post(body, { contentType });
    expect(result.status).toBe(400);
    expect(result.ms).toBeLessThan(1000);
    const { reply } = await command('/balance', '');
    expect(reply.response_type).toBe('ephemeral');
  });

  it('acknowledges a click on a button it no longer knows at once, posting nothing', async () => {
    const responseUrl = stack.slack.responseUrl();
    const ack = await post(blockActionsBody({ actionId: 'approve_refund_v0', value: 'x', responseUrl }));
    expect(ack.status).toBe(200);
    expect(ack.ms).toBeLessThan(1000);
    await sleep(100);
    expect(stack.slack.posts.filter((p) => p.url === responseUrl)).toEqual([]);
    // The bot's log lines come through its stdout pipe, a moment after the ack.
    await expect
      .poll(() =>
        stack.bot
          .logs()
          .filter((l) => l.name === 'approve_refund_v0')
          .map((l) => l.msg),
      )
      .toEqual(['acknowledged a request this app has no listener for']);
  });

  it('survives a request it cannot parse and keeps answering', async () => {
    const garbage = await post('{"type":"event_callback","event":', { contentType: 'application/json' });
    expect(garbage.status).toBeGreaterThanOrEqual(400);
    const { reply } = await command('/balance', '');
    expect(reply.response_type).toBe('ephemeral');
    expect(stack.bot.child.exitCode).toBeNull();
  });

  it('serves Prometheus metrics, unsigned, with labels from a closed set only', async () => {
    await command('/invoice', DEMO_INVOICE_IDS.paid, { user_id: 'U0METRICS' });
    await command('/balance', '', { user_id: 'U0METRICS' });
    const response = await fetch(`${stack.bot.url}/metrics`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toMatch(/slackbot_requests_total\{kind="command",name="\/invoice",outcome="ok"\} \d+/);
    expect(text).toMatch(
      /slackbot_payment_calls_total\{operation="balance",lane="interactive",result="ok"\} \d+/,
    );
    expect(text).toMatch(/slackbot_request_duration_seconds_count\{kind="command"\} \d+/);
    expect(text).toContain('slackbot_watches_active 0');
    expect(text).toContain('slackbot_inflight');
    // No id, person or free text as a label value.
    expect(text).not.toContain('U0METRICS');
    expect(text).not.toContain(DEMO_INVOICE_IDS.paid);
    expect(text).not.toContain('T0HOME');
  });

  it('logs one JSON line per request with who asked, what, the outcome and the latency', async () => {
    await command('/invoice', DEMO_INVOICE_IDS.open, { user_id: 'U0LOGME' });
    await expect
      .poll(() => stack.bot.logs().find((l) => l.user === 'U0LOGME' && l.kind === 'command'))
      .toMatchObject({
        level: 'info',
        name: '/invoice',
        team: 'T0HOME',
        channel: 'C0SUPPORT',
        invoiceId: DEMO_INVOICE_IDS.open,
        outcome: 'ok',
        delivery: 'ack',
        ms: expect.any(Number),
      });
  });

  it('never lets a secret out: not in logs (at debug level), acks, posts or API calls', () => {
    const everything = [
      ...stack.bot.output,
      ...ackBodies,
      ...stack.slack.posts.map((p) => p.raw),
      ...stack.slack.calls.map((c) => c.raw),
    ].join('\n');
    expect(stack.bot.output.length).toBeGreaterThan(20);
    for (const secret of [stack.sandbox.apiKey, SECRETS.botToken, SECRETS.signingSecret]) {
      expect(everything).not.toContain(secret);
    }
  });
});
