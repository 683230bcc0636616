import type { RespondArguments } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { createBalanceCommand } from '../../src/listeners/commands/balance.js';
import { createInvoiceCommand } from '../../src/listeners/commands/invoice.js';
import { commandListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS, num } from '../../src/sandbox/data.js';
import { BALANCE_TITLE } from '../../src/views/balance.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { captureLogs, commandArgs, type DepsOptions, HOME_TEAM } from '../support/bolt.js';
import { useSandbox } from '../support/use-sandbox.js';

const env = useSandbox();

type Command = '/balance' | '/invoice';

/** Runs one slash command through the real listener and returns what Slack would have received. */
async function run(
  command: Command,
  text: string,
  opts: DepsOptions & {
    team?: string;
    user?: string;
    channel?: string;
    failRespond?: boolean;
    failAck?: boolean;
  } = {},
) {
  const deps = env.deps(opts);
  const handler = command === '/balance' ? createBalanceCommand(deps) : createInvoiceCommand(deps);
  const { args, rec } = commandArgs(
    {
      command,
      text,
      ...(opts.team ? { team_id: opts.team } : {}),
      ...(opts.user ? { user_id: opts.user } : {}),
      ...(opts.channel ? { channel_id: opts.channel } : {}),
    },
    { failRespond: opts.failRespond ?? false, failAck: opts.failAck ?? false },
  );
  await commandListener(deps, command, handler)(args);
  const [ack] = rec.acks;
  const reply = (typeof ack === 'object' ? ack : rec.responses[0]) as RespondArguments | undefined;
  return { rec, reply, deps };
}

describe('/balance', () => {
  it('answers in the ack, ephemeral, with the exact balances', async () => {
    const { rec, reply } = await run('/balance', '');
    expect(rec.acks).toHaveLength(1);
    expect(rec.responses).toHaveLength(0);
    expect(reply?.response_type).toBe('ephemeral');
    expectValidMessage(reply);
    expect(visibleText(reply)).toContain('*Bitcoin*\n0.0123456 BTC');
    expect(visibleText(reply)).toContain('*Litecoin*\n0.0000001 LTC');
    expect(env.sandbox.requests.map((r) => r.path)).toEqual(['/api/v2/balance']);
  });

  it('groups the amounts the service sent for reading, keeps them exact in the text, and counts the zeros', async () => {
    env.sandbox.setBalances([
      { id: 'DOGE', title: 'Dogecoin', balance: num('12345678901234567890.000000000000000001') },
      { id: 'USDT-TRC20', title: 'Tether (TRC-20)', balance: num('-1520.50') },
      { id: 'ETH', title: 'Ethereum', balance: num('0') },
      { id: 'TRX', title: 'TRON', balance: num('0.000') },
    ]);
    const { reply } = await run('/balance', '');
    expectValidMessage(reply);
    const text = visibleText(reply);
    expect(text).toContain('*Dogecoin*\n12,345,678,901,234,567,890.000000000000000001 DOGE');
    expect(text).toContain('*Tether (TRC-20)*\n-1,520.50 USDT-TRC20');
    expect(text).toContain('and 2 more at 0');
    expect(text).not.toMatch(/Ethereum|TRON/);
    expect(reply?.text).toBe(
      `${BALANCE_TITLE}: 12345678901234567890.000000000000000001 DOGE, -1520.50 USDT-TRC20`,
    );
  });

  it.each<[string, DepsOptions & { team?: string; user?: string; channel?: string }, string]>([
    ['someone from another workspace', { team: 'T0GUEST' }, 'only for members of this workspace'],
    [
      'someone not on the allow-list',
      { policy: { allowedUsers: ['U0FINANCE'] } },
      'not allowed to see the balance',
    ],
    [
      'a channel not on the allow-list',
      { policy: { allowedChannels: ['C0FINANCE'] } },
      'not available in this channel',
    ],
  ])('refuses %s, ephemerally, without calling the service', async (_label, opts, phrase) => {
    const { reply } = await run('/balance', '', opts);
    expect(reply?.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain(phrase);
    expect(env.sandbox.requests).toHaveLength(0);
  });

  it('lets the listed people in the listed channels through', async () => {
    const { reply } = await run('/balance', '', {
      user: 'U0FINANCE',
      channel: 'C0FINANCE',
      policy: { allowedUsers: ['U0FINANCE'], allowedChannels: ['C0FINANCE'] },
    });
    expect(visibleText(reply)).toContain(BALANCE_TITLE);
    expect(visibleText(reply)).toContain('0.0123456 BTC');
  });

  it('explains itself on "help", to anyone, without calling the service', async () => {
    const { reply } = await run('/balance', ' HELP ', { team: 'T0GUEST' });
    expect(visibleText(reply)).toContain('shows the merchant');
    expect(env.sandbox.requests).toHaveLength(0);
  });

  it('tells an admin to check the key when the service rejects it, never showing it', async () => {
    env.sandbox.failNext({
      kind: 'status',
      status: 401,
      body: '{"status":401,"name":"UnauthorizedError","message":"shop not found","details":"check api key"}',
    });
    const { reply } = await run('/balance', '');
    expect(reply?.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain('`PAYMENT_API_KEY`');
    expect(JSON.stringify(reply)).not.toContain(env.sandbox.apiKey);
  });

  it('acks empty by the fast-path deadline when the service is slow, then answers via response_url', async () => {
    env.sandbox.setLatency(300);
    const { rec, reply } = await run('/balance', '', { fastPathMs: 100 });
    expect(rec.acks).toEqual([undefined]);
    expect(rec.ackMs).toBeLessThan(250);
    expect(rec.responses).toHaveLength(1);
    expect(reply?.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain('1,520.5 USDT-TRC20');
  });

  it('logs one line for the request with who asked, the outcome and the latency', async () => {
    const logs = captureLogs([env.sandbox.apiKey]);
    await run('/balance', '', { logger: logs.logger });
    const line = logs.lines.find((l) => l.msg === 'command /balance');
    expect(line).toMatchObject({
      kind: 'command',
      user: 'U0ASKER',
      team: HOME_TEAM,
      channel: 'C0SUPPORT',
      outcome: 'ok',
      delivery: 'ack',
    });
    expect(line?.ms).toEqual(expect.any(Number));
  });
});

describe('request logs', () => {
  const logged = async (command: Command, text: string, opts: Parameters<typeof run>[2] = {}) => {
    const logs = captureLogs();
    await run(command, text, { ...opts, logger: logs.logger });
    return logs.lines;
  };
  const outcome = async (command: Command, text: string, opts: Parameters<typeof run>[2] = {}) =>
    (await logged(command, text, opts)).find((l) => l.msg === `command ${command}`);

  it.each<[string, Command, string, Parameters<typeof run>[2], Record<string, unknown>]>([
    ['a balance', '/balance', '', {}, { outcome: 'ok', delivery: 'ack' }],
    ['balance help', '/balance', 'help', {}, { outcome: 'help' }],
    ['balance with words after it', '/balance', 'please', {}, { outcome: 'usage' }],
    ['a refusal', '/balance', '', { team: 'T0GUEST' }, { outcome: 'other_workspace', team: 'T0GUEST' }],
    [
      'an invoice',
      '/invoice',
      DEMO_INVOICE_IDS.open,
      {},
      { outcome: 'ok', invoiceId: DEMO_INVOICE_IDS.open },
    ],
    ['invoice help', '/invoice', 'help', {}, { outcome: 'help' }],
    ['an empty invoice command', '/invoice', ' ', {}, { outcome: 'usage' }],
    ['a typo', '/invoice', 'not-an-id', {}, { outcome: 'invalid_input' }],
    [
      'an unknown invoice',
      '/invoice',
      'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee',
      {},
      { outcome: 'invoice_not_found', invoiceId: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee' },
    ],
  ])('record the outcome of %s', async (_label, command, text, opts, fields) => {
    expect(await outcome(command, text, opts)).toMatchObject({
      level: 'info',
      kind: 'command',
      name: command,
      ...fields,
    });
  });

  it('record a failing service under its code, with the invoice asked for', async () => {
    env.sandbox.failNext({ kind: 'status', status: 500 });
    expect(await outcome('/invoice', DEMO_INVOICE_IDS.paid)).toMatchObject({
      outcome: 'service_unavailable',
      invoiceId: DEMO_INVOICE_IDS.paid,
    });
  });

  it('write only the request line for what the person got wrong or was refused', async () => {
    for (const [command, text, opts] of [
      ['/invoice', 'not-an-id', {}],
      ['/invoice', 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', {}],
      ['/balance', '', { team: 'T0GUEST' }],
    ] as const) {
      expect((await logged(command, text, opts)).map((l) => [l.level, l.msg])).toEqual([
        ['info', `command ${command}`],
      ]);
    }
  });

  it('add a warning with the details when the service fails', async () => {
    env.sandbox.failNext({ kind: 'html' });
    const lines = (await logged('/invoice', DEMO_INVOICE_IDS.open)).map((l) => [l.level, l.msg, 'err' in l]);
    expect(lines).toEqual([
      ['warn', 'unexpected answer from the payment service: the body is not JSON', true],
      ['info', 'command /invoice', false],
    ]);
  });

  it('log a bug in a handler as an error with its stack, and still answer the person', async () => {
    const logs = captureLogs();
    const deps = env.deps({ logger: logs.logger });
    const { args, rec } = commandArgs({ command: '/balance' });
    await commandListener(deps, '/balance', async () => {
      throw new TypeError('boom');
    })(args);
    expect(logs.lines.map((l) => [l.level, l.msg, l.outcome])).toEqual([
      ['error', 'request failed', undefined],
      ['info', 'command /balance', 'internal_error'],
    ]);
    expect(String(logs.lines[0]?.err && (logs.lines[0].err as { stack: string }).stack)).toContain(
      'TypeError: boom',
    );
    expect(visibleText(rec.acks[0])).toContain('Something went wrong inside the bot');
  });

  it('deliver the reply through the response_url when the ack cannot be sent', async () => {
    const logs = captureLogs();
    const { rec } = await run('/balance', '', { failAck: true, logger: logs.logger });
    expect(rec.acks).toEqual([]);
    expect(rec.responses).toHaveLength(1);
    expect(visibleText(rec.responses[0])).toContain('0.0123456 BTC');
    expect(logs.lines.map((l) => [l.level, l.msg])).toEqual([
      ['error', 'could not acknowledge the request'],
      ['info', 'command /balance'],
    ]);
    expect(logs.lines.at(-1)).toMatchObject({ outcome: 'ok', delivery: 'response_url' });
  });

  it('record a reply lost both ways as delivery "failed"', async () => {
    const logs = captureLogs();
    await run('/balance', '', { failAck: true, failRespond: true, logger: logs.logger });
    expect(logs.lines.map((l) => [l.level, l.msg])).toEqual([
      ['error', 'could not acknowledge the request'],
      ['warn', 'could not post the reply to response_url'],
      ['info', 'command /balance'],
    ]);
    expect(logs.lines.at(-1)).toMatchObject({ outcome: 'ok', delivery: 'failed' });
  });
});

describe('/invoice', () => {
  const id = DEMO_INVOICE_IDS.open;

  it.each([
    ['an id', id],
    ['an upper-case id with spaces around', `   ${id.toUpperCase()}  `],
    ['a pasted payment link', () => `${env.sandbox.payUrl}/pay/${id}`],
    ['a link as Slack escapes it', () => `<${env.sandbox.payUrl}/pay/${id}>`],
    ['a labelled link as Slack escapes it', () => `<${env.sandbox.payUrl}/pay/${id}|Pay here>`],
  ])('shows the invoice in the channel for %s', async (_label, text) => {
    const { reply } = await run('/invoice', typeof text === 'function' ? text() : text);
    expect(reply?.response_type).toBe('in_channel');
    expectValidMessage(reply);
    expect(visibleText(reply)).toContain('Order #1042');
    expect(env.sandbox.requests.map((r) => r.path)).toEqual([`/api/v2/invoice/${id}`]);
  });

  it('replies only to the asker when INVOICE_REPLY is ephemeral', async () => {
    const { reply } = await run('/invoice', id, { invoiceReply: 'ephemeral' });
    expect(reply?.response_type).toBe('ephemeral');
  });

  it.each([
    ['nothing', '', 'Give an invoice id or paste a payment link'],
    ['help', 'help', 'shows one invoice'],
  ])('answers %s with guidance, without calling the service', async (_label, text, phrase) => {
    const { reply } = await run('/invoice', text);
    expect(reply?.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain(phrase);
    expect(env.sandbox.requests).toHaveLength(0);
  });

  it.each([
    ['garbage', 'show me the money', '`show me the money`'],
    ['a path escape', '../balance', '`../balance`'],
    ['a link on another host', `https://evil.example/pay/${id}`, `\`https://evil.example/pay/${id}\``],
    ['a mention', '<!channel>', '`&lt;!channel&gt;`'],
  ])('quotes %s back in an ephemeral error and calls nothing', async (_label, text, quoted) => {
    const { reply } = await run('/invoice', text);
    expect(reply?.response_type).toBe('ephemeral');
    expectValidMessage(reply);
    expect(visibleText(reply)).toContain(quoted);
    expect(env.sandbox.requests).toHaveLength(0);
  });

  it('names the id of an invoice that does not exist', async () => {
    const missing = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
    const { reply } = await run('/invoice', missing);
    expect(reply?.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain(`no invoice \`${missing}\``);
  });

  it.each([
    [{ kind: 'status' as const, status: 503 }, 3, 'unavailable'],
    [
      { kind: 'status' as const, status: 429, headers: { 'retry-after': '120' } },
      1,
      'Try again in 2 minutes',
    ],
    [{ kind: 'html' as const }, 1, 'could not read'],
    [{ kind: 'hang' as const }, 1, 'did not answer in time'],
  ])('explains a failing service (%o) ephemerally', async (fault, times, phrase) => {
    env.sandbox.failNext(fault, times);
    const { reply } = await run('/invoice', id, { fastPathMs: 5000, paymentTimeoutMs: 400 });
    expect(reply?.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain(phrase);
  });

  it('does not throw when the response_url is gone, and logs it', async () => {
    env.sandbox.setLatency(200);
    const logs = captureLogs();
    await run('/invoice', id, { fastPathMs: 50, failRespond: true, logger: logs.logger });
    expect(logs.lines.find((l) => l.msg === 'command /invoice')).toMatchObject({
      outcome: 'ok',
      delivery: 'failed',
      invoiceId: id,
    });
  });
});

describe('/invoice seen by the channel', () => {
  /** Runs `/invoice` and says what Slack had received when the lookup's sighting was recorded. */
  async function sightedAfter(fastPathMs: number) {
    const deps = env.deps({ fastPathMs });
    const { args, rec } = commandArgs({ command: '/invoice', text: DEMO_INVOICE_IDS.paid });
    const seen: { channel: string | undefined; acks: number; responses: number }[] = [];
    const watches = {
      ...deps.watches,
      lookedUp: async (channel: string | undefined) => {
        seen.push({ channel, acks: rec.acks.length, responses: rec.responses.length });
      },
    };
    await commandListener(deps, '/invoice', createInvoiceCommand({ ...deps, watches }))(args);
    return seen;
  }

  it('records its sighting (for the feed) once the card is in the ack, not before', async () => {
    expect(await sightedAfter(5000)).toEqual([{ channel: 'C0SUPPORT', acks: 1, responses: 0 }]);
  });

  it('records it after what was already waiting when the card went out (another person’s answer)', async () => {
    const deps = env.deps({ fastPathMs: 5000 });
    const { args, rec } = commandArgs({ command: '/invoice', text: DEMO_INVOICE_IDS.paid });
    const order: string[] = [];
    const { ack } = args;
    args.ack = (response) => {
      setImmediate(() => order.push('waiting work')); // as the next answer from the service, in by now
      return ack(response);
    };
    const watches = { ...deps.watches, lookedUp: async () => void order.push('sighting') };
    await commandListener(deps, '/invoice', createInvoiceCommand({ ...deps, watches }))(args);
    expect(rec.acks).toHaveLength(1);
    expect(order).toEqual(['waiting work', 'sighting']);
  });

  it('records it once the card is sent through the response_url, when the service was slow', async () => {
    env.sandbox.setLatency(200);
    expect(await sightedAfter(50)).toEqual([{ channel: 'C0SUPPORT', acks: 1, responses: 1 }]);
  });
});

describe('/balance asked by many at once', () => {
  it('builds one message for requests that share one answer, and reads again for a later one', async () => {
    env.sandbox.setLatency(50);
    const deps = env.deps();
    const listener = commandListener(deps, '/balance', createBalanceCommand(deps));
    const ask = async () => {
      const { args, rec } = commandArgs({ command: '/balance', text: '' });
      await listener(args);
      return rec.acks[0] as { blocks?: unknown };
    };
    const [a, b] = await Promise.all([ask(), ask()]);
    expect(a?.blocks).toBe(b?.blocks);
    expect(env.sandbox.requests).toHaveLength(1);
    const later = await ask();
    expect(later?.blocks).not.toBe(a?.blocks);
    expect(later?.blocks).toEqual(a?.blocks);
    expect(env.sandbox.requests).toHaveLength(2);
  });
});
