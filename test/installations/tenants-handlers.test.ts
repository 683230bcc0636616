import type { AllMiddlewareArgs } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { linkSharedArgs } from '../support/bolt.js';
import { startSlackStandIn } from '../support/slack-stand-in.js';
import { ask, balance, ID, installation, OTHER_KEY, useTenantsWorld } from '../support/tenants-world.js';

/** Each installation's own handlers: built, kept and let go per installation, serving its own money only. */
const world = useTenantsWorld();
const { tenants } = world;

describe('each installation’s own handlers', () => {
  it('reads each installation’s money with its own key, and only its own', async () => {
    const t = tenants({ T0ONE: OTHER_KEY, T0TWO: world.sandbox.apiKey });
    const [one, two] = await Promise.all([
      balance(t.tenants, installation('T0ONE', 1)),
      balance(t.tenants, installation('T0TWO', 1)),
    ]);
    expect(one).toContain('Monero');
    expect(one).not.toContain('Bitcoin');
    expect(two).toContain('Bitcoin');
    expect(two).not.toContain('Monero');
    expect(t.made.sort()).toEqual([OTHER_KEY, world.sandbox.apiKey].sort());
  });

  it('builds an installation’s part once, and again for a new key or a rotated token', async () => {
    const t = tenants({ T0ONE: OTHER_KEY });
    await Promise.all([
      balance(t.tenants, installation('T0ONE', 1)),
      balance(t.tenants, installation('T0ONE', 1)),
    ]);
    expect(t.made).toHaveLength(1);
    await balance(t.tenants, installation('T0ONE', 2));
    expect(t.made).toHaveLength(2);
    await balance(t.tenants, installation('T0ONE', 2), '', 'xoxb-rotated');
    expect(t.made).toHaveLength(3);
    await balance(t.tenants, installation('T0ONE', 2), '', 'xoxb-rotated');
    expect(t.made).toHaveLength(3);
  });

  it('keeps at most `max` installations, dropping the least recently used', async () => {
    const t = tenants({ A: OTHER_KEY, B: OTHER_KEY, C: OTHER_KEY }, { max: 2 });
    await balance(t.tenants, installation('A', 1));
    await balance(t.tenants, installation('B', 1));
    await balance(t.tenants, installation('A', 1));
    await balance(t.tenants, installation('C', 1));
    expect(t.tenants.size).toBe(2);
    expect(t.made).toHaveLength(3);
    await balance(t.tenants, installation('A', 1));
    expect(t.made).toHaveLength(3);
    await balance(t.tenants, installation('B', 1));
    expect(t.made).toHaveLength(4);
  });

  it('forgets an installation at once when told (uninstalled, token revoked)', async () => {
    const t = tenants({ A: OTHER_KEY });
    await balance(t.tenants, installation('A', 1));
    t.tenants.forget(ID.A);
    expect(t.tenants.size).toBe(0);
    await balance(t.tenants, installation('A', 1));
    expect(t.made).toHaveLength(2);
    // One this instance never served (uninstalled while another instance served it): nothing to forget.
    expect(() => t.tenants.forget(ID.B)).not.toThrow();
    expect(t.tenants.size).toBe(1);
  });

  it('does not keep a part whose build failed: the next request builds it again', async () => {
    const t = tenants({ A: OTHER_KEY });
    t.failNextKey();
    await expect(balance(t.tenants, installation('A', 1))).rejects.toThrow('the store is not answering');
    expect(t.tenants.size).toBe(0);
    expect(await balance(t.tenants, installation('A', 1))).toContain('Monero');
  });

  it('keeps the part built after the installation was forgotten when a build from before fails', async () => {
    const t = tenants({ A: OTHER_KEY });
    const context = {
      installation: installation('A', 1),
      botToken: 'xoxb-A',
    } as unknown as AllMiddlewareArgs['context'];
    t.failNextKey();
    const failing = t.tenants.handlersOf(context);
    // Uninstalled and installed again (or evicted) while that build was still reading the key.
    t.tenants.forget(ID.A);
    const served = t.tenants.handlersOf(context);
    await expect(failing).rejects.toThrow('the store is not answering');
    await served;
    expect(t.tenants.size).toBe(1);
    expect(await balance(t.tenants, installation('A', 1))).toContain('Monero');
    expect(t.made).toEqual([OTHER_KEY]);
  });

  it('lets go of the payments client of each part no longer used: a replaced key, the least recently used, a forgotten one', async () => {
    const t = tenants({ A: OTHER_KEY, B: OTHER_KEY, C: OTHER_KEY }, { max: 2 });
    await balance(t.tenants, installation('A', 1));
    await balance(t.tenants, installation('A', 2));
    expect(t.closed).toEqual(['A']);
    await balance(t.tenants, installation('B', 1));
    await balance(t.tenants, installation('C', 1));
    expect(t.tenants.size).toBe(2);
    expect(t.closed).toEqual(['A', 'A']);
    t.tenants.forget(ID.B);
    await new Promise((resolve) => setImmediate(resolve));
    expect(t.closed).toEqual(['A', 'A', 'B']);
  });

  it('serves a replaced key when the old key’s client has nothing to let go', async () => {
    const t = tenants({ A: OTHER_KEY }, { withoutClose: true });
    await balance(t.tenants, installation('A', 1));
    expect(await balance(t.tenants, installation('A', 2))).toContain('Monero');
    expect(t.made).toHaveLength(2);
  });

  it('serves an installation connected since it was last seen not connected', async () => {
    const t = tenants({ A: OTHER_KEY });
    expect(await balance(t.tenants, installation('A'))).toContain('not connected');
    expect(await balance(t.tenants, installation('A', 1))).toContain('Monero');
    expect(t.made).toEqual([OTHER_KEY]);
  });

  it('answers an installation without a payment account that it is not connected, calling no service', async () => {
    const t = tenants({});
    const asked = world.sandbox.requests.length;
    const answer = await balance(t.tenants, installation('T0NEW'));
    expect(answer).toContain('not connected');
    expect(answer).toContain('<@U0T0NEWADMIN>');
    expect(world.sandbox.requests).toHaveLength(asked);
    expect(t.made).toEqual([]);
  });

  it('treats an account whose key is gone (disconnected meanwhile) as not connected', async () => {
    const t = tenants({ A: undefined });
    expect(await balance(t.tenants, installation('A', 1))).toContain('not connected');
    expect(t.made).toEqual([]);
  });

  it('runs the payments feed of each connected installation in its own private channels, with its own key and token', async () => {
    const slack = await startSlackStandIn({ teamId: 'A', botToken: 'xoxb-A' });
    slack.tokens.set('xoxb-B', { team_id: 'B' });
    slack.conversations.set('G0FIN', { id: 'G0FIN', is_private: true });
    slack.conversations.set('C0ALL', { id: 'C0ALL', is_private: false });
    const t = tenants({ A: OTHER_KEY, B: world.sandbox.apiKey }, { slackApiUrl: slack.apiUrl });
    const feedCommand = (id: string, text: string, channel: string) =>
      ask(t.tenants, installation(id, 1), '/balance', text, `xoxb-${id}`, channel);
    const asked = world.sandbox.requests.length;
    // The same channel id in two installations is two channels: a feed in each.
    expect(await feedCommand('A', 'subscribe', 'G0FIN')).toContain('the payments feed is on in this channel');
    expect(await feedCommand('B', 'subscribe 18:30 Europe/Berlin', 'G0FIN')).toContain(
      'the payments feed is on in this channel',
    );
    const starts = slack.calls.filter((c) => c.method === 'chat.postMessage');
    expect(starts.map((c) => [c.token, JSON.stringify(c.args).includes('Monero')])).toEqual([
      ['xoxb-A', true],
      ['xoxb-B', false],
    ]);
    expect(new Set(world.sandbox.requests.slice(asked).map((q) => q.authorization))).toEqual(
      new Set([`Token ${OTHER_KEY}`, `Token ${world.sandbox.apiKey}`]),
    );
    // Each lists its own; nobody lists public channels for a workspace of many.
    const listed = await feedCommand('B', 'subscriptions', 'G0FIN');
    expect(listed).toContain('18:30 Europe/Berlin');
    expect(listed).not.toContain('09:00 UTC');
    const publicOne = await feedCommand('A', 'subscribe', 'C0ALL');
    expect(publicOne).toContain('The payments feed needs a private channel');
    expect(publicOne).not.toContain('BALANCE_ALLOWED_CHANNELS');
    expect(await feedCommand('A', 'unsubscribe', 'G0FIN')).toContain(
      'The payments feed is off in this channel',
    );
    expect(await feedCommand('B', 'subscriptions', 'G0FIN')).toContain('18:30 Europe/Berlin');
    // What the feed queued to say goes out with the installation's own token, in its own lane.
    expect(
      await world.store.db
        .selectFrom('outbox')
        .select(['installation_id', 'lane'])
        .where('channel', '=', 'G0FIN')
        .execute(),
    ).toEqual([{ installation_id: 'A', lane: 'A/G0FIN' }]);
    expect(slack.problems).toEqual([]);
    await slack.close();
  });

  it('keys the events it has seen by installation: one event id in two workspaces is two events', async () => {
    const t = tenants({ A: OTHER_KEY, B: OTHER_KEY });
    for (const id of ['A', 'B']) {
      const context = {
        installation: installation(id, 1),
        botToken: `xoxb-${id}`,
      } as unknown as AllMiddlewareArgs['context'];
      const { args } = linkSharedArgs(['https://pay.example.com/nothing'], { eventId: 'Ev0SAME' });
      await (await t.tenants.handlersOf(context)).event.link_shared({ ...args, context } as never);
    }
    expect(t.seen).toEqual(['A:event:Ev0SAME', 'B:event:Ev0SAME']);
  });

  it('publishes the account alone when a not-connected installation’s Home is opened', async () => {
    const t = tenants({});
    const context = {
      installation: installation('B'),
      botToken: 'xoxb-b',
    } as unknown as AllMiddlewareArgs['context'];
    await (await t.tenants.handlersOf(context)).event.app_home_opened({
      event: { type: 'app_home_opened', user: 'U0OPENER', tab: 'home', channel: 'D0' },
      body: { team_id: 'B' },
      client: {},
      context,
    } as never);
    expect(t.homes).toEqual(['B:U0OPENER']);
  });

  it('opens the connect modal for `/balance connect`, connected or not', async () => {
    const t = tenants({ A: OTHER_KEY });
    await balance(t.tenants, installation('A', 1), ' Connect ');
    await balance(t.tenants, installation('B'), 'connect');
    expect(t.connects).toEqual(['U0ASKER', 'U0ASKER']);
  });

  it('refuses a request authorized without a bot token', async () => {
    const t = tenants({ A: OTHER_KEY });
    const context = { installation: installation('A', 1) } as unknown as AllMiddlewareArgs['context'];
    await expect(t.tenants.handlersOf(context)).rejects.toThrow('without a bot token');
  });

  it('publishes the account alone as the Home of an installation without a payment account', async () => {
    const t = tenants({});
    const context = {
      installation: installation('B'),
      botToken: 'xoxb-b',
    } as unknown as AllMiddlewareArgs['context'];
    await t.tenants.publishHome(context, installation('B'), {} as never, 'U0SOMEONE');
    expect(t.homes).toEqual(['B:U0SOMEONE']);
  });

  it('tags every log line and metric of an installation’s requests with it, and never logs its key', async () => {
    const t = tenants({ T0ONE: OTHER_KEY });
    await balance(t.tenants, installation('T0ONE', 1));
    await balance(t.tenants, installation('T0NEW'));
    expect(t.requests).toEqual(['T0ONE:command:/balance:ok', 'T0NEW:command:/balance:not_connected']);
    const line = t.logs.lines.find((l) => l.name === '/balance');
    expect(line).toMatchObject({ installation: 'T0ONE', outcome: 'ok' });
    expect(t.logs.raw.join('\n')).not.toContain(OTHER_KEY);
  });
});
