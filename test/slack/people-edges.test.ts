import { webApi } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { createDirectory, type UsersClient } from '../../src/slack/people.js';

type Answer = Awaited<ReturnType<UsersClient['users']['info']>>;

/** A users.info whose every call waits until the test settles it. */
function pending() {
  const calls: { user: string; resolve: (a: Answer) => void; reject: (e: Error) => void }[] = [];
  const client: UsersClient = {
    users: {
      info: ({ user }) =>
        new Promise<Answer>((resolve, reject) => {
          calls.push({ user, resolve, reject });
        }),
    },
  };
  return { client, calls };
}

const answering = (answer: Answer): UsersClient => ({ users: { info: async () => answer } });

describe('the directory, when Slack says little', () => {
  it('knows nothing of a person when users.info names no user, and counts the call as ok', async () => {
    const results: string[] = [];
    const lookUp = createDirectory(answering({}), { onCall: (r) => results.push(r) });
    expect(await lookUp('U1')).toEqual({
      teamId: undefined,
      enterpriseId: undefined,
      timeZone: undefined,
      guest: false,
    });
    expect(results).toEqual(['ok']);
  });

  it('reads a person of no organisation, with their time zone', async () => {
    const lookUp = createDirectory(answering({ user: { team_id: 'T1', tz: 'Europe/Kyiv' } }));
    expect(await lookUp('U1')).toEqual({
      teamId: 'T1',
      enterpriseId: undefined,
      timeZone: 'Europe/Kyiv',
      guest: false,
    });
  });

  it('throws a failure that is no Slack platform error as it is', async () => {
    const results: string[] = [];
    const failing: UsersClient = {
      users: {
        info: async () => {
          throw new Error('socket hang up');
        },
      },
    };
    const lookUp = createDirectory(failing, { onCall: (r) => results.push(r) });
    await expect(lookUp('U1')).rejects.toThrow(/^socket hang up$/);
    expect(results).toEqual(['error']);
  });

  it('throws a Slack platform error other than user_not_found', async () => {
    const error = Object.assign(Object.create(webApi.WebAPIPlatformError.prototype) as Error, {
      message: 'An API error occurred: missing_scope',
      data: { ok: false, error: 'missing_scope' },
    });
    const lookUp = createDirectory({
      users: {
        info: async () => {
          throw error;
        },
      },
    });
    await expect(lookUp('U1')).rejects.toBe(error);
  });
});

describe('the directory, when an old ask fails late', () => {
  it('keeps the newer answer that replaced it', async () => {
    const { client, calls } = pending();
    let now = 0;
    const lookUp = createDirectory(client, { ttlMs: 1000, clock: () => now });
    const old = lookUp('U1');
    now = 1500;
    const fresh = lookUp('U1');
    expect(calls).toHaveLength(2);
    calls[1]?.resolve({ user: { team_id: 'T1' } });
    await fresh;
    calls[0]?.reject(new Error('socket hang up'));
    await expect(old).rejects.toThrow('socket hang up');
    await new Promise((r) => setImmediate(r));
    expect(await lookUp('U1')).toEqual({
      teamId: 'T1',
      enterpriseId: undefined,
      timeZone: undefined,
      guest: false,
    });
    expect(calls).toHaveLength(2);
  });

  it('takes in its stride an ask that failed after it was pushed out', async () => {
    const { client, calls } = pending();
    const lookUp = createDirectory(client, { max: 1 });
    const first = lookUp('U1');
    const second = lookUp('U2');
    calls[0]?.reject(new Error('socket hang up'));
    await expect(first).rejects.toThrow('socket hang up');
    await new Promise((r) => setImmediate(r));
    calls[1]?.resolve({ user: { team_id: 'T2' } });
    expect((await second)?.teamId).toBe('T2');
    // U2 is still the one kept: asked once.
    await lookUp('U2');
    expect(calls.map((c) => c.user)).toEqual(['U1', 'U2']);
  });
});
