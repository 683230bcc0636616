import { beforeEach, describe, expect, it } from 'vitest';
import { createBalanceCommand } from '../../src/listeners/commands/balance.js';
import { commandListener } from '../../src/pipeline/kinds.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { captureLogs, commandArgs } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { useSandbox } from '../support/use-sandbox.js';

const env = useSandbox();

beforeEach(async () => {
  await emptyWork(env.store);
  env.poster.conversations.set('G0FINANCE', { isPrivate: true, isDirect: false, isShared: false });
  env.poster.conversations.set('C0GENERAL', { isPrivate: false, isDirect: false, isShared: false });
});

async function balance(text: string, channel = 'G0FINANCE', opts: Parameters<typeof env.deps>[0] = {}) {
  const logs = captureLogs();
  const deps = env.deps({ ...opts, logger: logs.logger });
  const { args, rec } = commandArgs({ command: '/balance', text, channel_id: channel });
  await commandListener(deps, '/balance', createBalanceCommand(deps))(args);
  const reply = rec.acks[0] ?? rec.responses[0];
  expectValidMessage(reply);
  return { reply: reply as { response_type: string }, outcome: logs.lines.at(-1)?.outcome };
}

describe('/balance subscribe', () => {
  it('turns the feed on in a private channel: a private reply, and a notice for the channel', async () => {
    const { reply, outcome } = await balance('subscribe 08:30 Europe/Berlin');
    expect(reply.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toBe(
      'Done: the payments feed is on in this channel, with a digest every day at 08:30 Europe/Berlin.',
    );
    expect(outcome).toBe('ok');
    expect(env.poster.repliesIn('G0FINANCE')).toHaveLength(1);
  });

  it('shows and keeps the time zone under the name given: Europe/Kyiv stays Europe/Kyiv', async () => {
    const { reply } = await balance('subscribe 08:30 Europe/Kyiv');
    expect(visibleText(reply)).toBe(
      'Done: the payments feed is on in this channel, with a digest every day at 08:30 Europe/Kyiv.',
    );
    expect(visibleText(env.poster.repliesIn('G0FINANCE')[0])).toContain('08:30 Europe/Kyiv');
    expect(visibleText((await balance('subscriptions', 'C0GENERAL')).reply)).toContain(
      '<#G0FINANCE> · digest 08:30 Europe/Kyiv',
    );
    const stored = await env.store.db.selectFrom('feed_subscriptions').select('digest_zone').execute();
    expect(stored).toEqual([{ digest_zone: 'Europe/Kyiv' }]);
  });

  it('explains why a public channel is refused', async () => {
    const { reply, outcome } = await balance('subscribe', 'C0GENERAL');
    expect(visibleText(reply)).toContain('The payments feed needs a private channel');
    expect(outcome).toBe('public_channel');
    expect(env.poster.messages).toEqual([]);
  });

  it('explains a time it cannot read, calling nothing', async () => {
    const { reply, outcome } = await balance('subscribe at nine');
    expect(visibleText(reply)).toContain('`at nine` is not a time and time zone');
    expect(outcome).toBe('invalid_input');
    expect(env.poster.calls).toEqual([]);
  });

  it('refuses someone not allowed to see the balance', async () => {
    const { reply } = await balance('subscribe', 'G0FINANCE', { policy: { allowedUsers: ['U0BOSS'] } });
    expect(visibleText(reply)).toContain('You are not allowed to see the balance');
  });
});

describe('/balance unsubscribe and subscriptions', () => {
  it('lists the workspace’s feeds and turns one off', async () => {
    await balance('subscribe');
    expect(visibleText((await balance('subscriptions', 'C0GENERAL')).reply)).toContain(
      '<#G0FINANCE> · digest 09:00 UTC',
    );
    expect(visibleText((await balance('unsubscribe')).reply)).toBe(
      'The payments feed is off in this channel.',
    );
    const again = await balance('unsubscribe');
    expect(visibleText(again.reply)).toBe('This channel does not receive the payments feed.');
    expect(again.outcome).toBe('not_subscribed');
  });

  it('keeps the list from people not allowed to see the balance', async () => {
    const { reply } = await balance('subscriptions', 'C0GENERAL', { policy: { allowedUsers: ['U0BOSS'] } });
    expect(visibleText(reply)).toContain('You are not allowed to see the balance');
  });
});

describe('/balance help', () => {
  it('tells about the feed too', async () => {
    const { reply, outcome } = await balance('help');
    expect(outcome).toBe('help');
    expect(visibleText(reply)).toContain(
      '*Payments feed*: `/balance subscribe [HH:MM [Area/City]]` in a private channel',
    );
  });
});
