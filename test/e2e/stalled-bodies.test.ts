import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { head, rawClient } from '../http/raw-client.js';
import { commandBody } from '../support/slack-requests.js';
import { askBot } from './harness.js';
import { useStack } from './use-stack.js';

/**
 * Issue 28: anyone on the internet could make the started bot hold memory by sending
 * `/slack/events` unsigned bodies and stalling. The figures (RSS, time to refusal) are in
 * bench/stalled-bodies.ts; this checks the behaviour.
 */

const stack = useStack();
const CLIENTS = 60;
const MiB = 1024 * 1024;

const rssMb = (pid: number | undefined) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

it('refuses 60 half-sent unsigned 4 MiB bodies from their headers, holds no memory for them, and still answers Slack', async () => {
  const pid = stack.bot.child.pid;
  await sleep(500);
  const before = rssMb(pid);
  const unsigned = head('POST', '/slack/events', {
    'content-type': 'application/json',
    'content-length': String(4 * MiB),
    'x-slack-request-timestamp': String(Math.floor(Date.now() / 1000)),
  });
  const clients = Array.from({ length: CLIENTS }, () =>
    rawClient(stack.bot.port, unsigned, Buffer.alloc(2 * MiB, 'x')),
  );
  try {
    // Refused from the headers means answered at once; a body read would wait for the bytes never sent.
    const answers = await Promise.race([
      Promise.all(clients.map((c) => c.answered.then((a) => a.status))),
      sleep(10_000).then(() => ['none within 10 s']),
    ]);
    // Each refused at once: a 401, or, for a client still sending its body, the reset the kernel
    // sends for the bytes the bot never read (the refusal is logged for every one, below).
    expect(answers).toHaveLength(CLIENTS);
    for (const status of answers) expect([401, undefined]).toContain(status);
    expect(answers.filter((status) => status === 401).length).toBeGreaterThan(0);
    // 120 MiB were sent at the bot; before the fix it kept them (RSS +120 MB and more).
    expect(rssMb(pid) - before).toBeLessThan(40);
  } finally {
    for (const c of clients) c.socket.destroy();
  }
  // The child's log lines arrive through its stdout pipe, a moment after the answers.
  await expect
    .poll(() => stack.bot.logs().filter((l) => l.reason === 'no_signature'), { timeout: 5_000 })
    .toHaveLength(CLIENTS);

  const { ack, reply } = await askBot(stack.bot, stack.slack, (response_url) =>
    commandBody({ command: '/balance', text: '', response_url }),
  );
  expect(ack.status).toBe(200);
  expect(reply).toMatchObject({ response_type: 'ephemeral' });
});
