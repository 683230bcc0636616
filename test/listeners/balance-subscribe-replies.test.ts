import { beforeEach, describe, expect, it } from 'vitest';
import { createBalanceCommand } from '../../src/listeners/commands/balance.js';
import { commandListener } from '../../src/pipeline/kinds.js';
import { visibleText } from '../support/block-kit.js';
import { captureLogs, commandArgs, type DepsOptions } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * `/balance` answers about the feed privately, reads extra spaces as one, and tells an operator
 * why a digest went to UTC.
 */
const env = useSandbox();

beforeEach(async () => {
  await emptyWork(env.store);
  env.poster.conversations.set('G0BOOKS', { isPrivate: true, isDirect: false, isShared: false });
});

/** `/balance <text>` in the private channel G0BOOKS: what Slack gets back, and the log. */
async function inBooks(text: string, opts: DepsOptions = {}) {
  const logs = captureLogs();
  const deps = env.deps({ ...opts, logger: logs.logger });
  const { args, rec } = commandArgs({ command: '/balance', text, channel_id: 'G0BOOKS' });
  await commandListener(deps, '/balance', createBalanceCommand(deps))(args);
  const reply = (rec.acks[0] ?? rec.responses[0]) as { response_type?: string };
  return { text: visibleText(reply), shown: reply.response_type, lines: logs.lines };
}

describe('/balance subscribe', () => {
  it('tells only the person that the digest moved', async () => {
    await inBooks('subscribe');
    const moved = await inBooks('subscribe 08:30 Europe/Kyiv');
    expect(moved.text).toContain('with its digest every day at 08:30 Europe/Kyiv from now on');
    expect(moved.shown).toBe('ephemeral');
  });

  it('reads extra spaces between the words as one', async () => {
    const { text } = await inBooks('  subscribe   07:15    Asia/Tokyo ');
    expect(text).toBe(
      'Done: the payments feed is on in this channel, with a digest every day at 07:15 Asia/Tokyo.',
    );
  });

  it('warns with Slack’s error when it cannot read the person’s time zone', async () => {
    const { lines } = await inBooks('subscribe 07:15', { directoryFails: 'after_first' });
    expect(lines.find((l) => l.level === 'warn')).toMatchObject({
      msg: 'could not read the person’s time zone from Slack: the digest is in UTC',
      err: { message: 'An API error occurred: missing_scope' },
    });
  });
});

describe('/balance with a mistyped word and extra spaces', () => {
  it('suggests the command again with the rest as typed, its spaces made single', async () => {
    const { text } = await inBooks('subscibe   07:15  Asia/Tokyo');
    expect(text).toContain('Did you mean `/balance subscribe 07:15 Asia/Tokyo`?');
  });
});
