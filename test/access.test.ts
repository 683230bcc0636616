import { webApi } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import {
  AccessDeniedError,
  type AccessPolicy,
  type Action,
  createAccess,
  type Membership,
  mayManageAccount,
  RULES,
  refusalFor,
  type Standing,
  sameOrganisation,
} from '../src/access.js';
import { createDirectory, type UsersClient } from '../src/slack/people.js';

const WORKSPACE = { teamId: 'T0HOME', enterpriseId: undefined };
const GRID = { teamId: 'T0HOME', enterpriseId: 'E0ORG' };
/** auth.test of an organisation-wide token names the organisation where a workspace would be. */
const ORG_WIDE = { teamId: 'E0ORG', enterpriseId: 'E0ORG' };

/** A directory that answers from `people` and counts the people it was asked about. */
function directory(people: Record<string, Membership>) {
  const asked: string[] = [];
  return {
    asked,
    lookUp: async (userId: string) => {
      asked.push(userId);
      return people[userId];
    },
  };
}

const PEOPLE: Record<string, Membership> = {
  U0MEMBER: { teamId: 'T0HOME', enterpriseId: 'E0ORG' },
  W0SISTER: { teamId: 'T0SISTER', enterpriseId: 'E0ORG' },
  U0GUEST: { teamId: 'T0GUEST', enterpriseId: 'E0OTHER' },
  U0LONER: { teamId: 'T0GUEST', enterpriseId: undefined },
  U0SINGLE: { teamId: 'T0HOME', enterpriseId: 'E0ORG', guest: true },
  U0MULTI: { teamId: 'T0HOME', enterpriseId: 'E0ORG', guest: true },
};

describe('the organisation', () => {
  it.each([
    ['a member of the workspace', WORKSPACE, PEOPLE.U0MEMBER, true],
    [
      'someone of another workspace, when the bot belongs to no organisation',
      WORKSPACE,
      PEOPLE.W0SISTER,
      false,
    ],
    ['a member of another workspace of the same organisation', GRID, PEOPLE.W0SISTER, true],
    ['the same, for an organisation-wide install', ORG_WIDE, PEOPLE.W0SISTER, true],
    [
      'a member of the installing workspace, for an organisation-wide install',
      ORG_WIDE,
      PEOPLE.U0MEMBER,
      true,
    ],
    ['a guest of another organisation', GRID, PEOPLE.U0GUEST, false],
    ['a guest whose workspace is in no organisation', ORG_WIDE, PEOPLE.U0LONER, false],
    [
      'someone of another workspace in no organisation, when the bot belongs to none either',
      WORKSPACE,
      PEOPLE.U0LONER,
      false,
    ],
  ])('%s', (_label, home, person, same) => {
    expect(sameOrganisation(home, person as Membership)).toBe(same);
  });
});

describe('the rules', () => {
  const policy: AccessPolicy = {
    home: WORKSPACE,
    allowedUsers: ['U0FINANCE'],
    allowedChannels: ['C0FINANCE'],
  };
  const ask = (
    what: Action,
    userId: string | undefined,
    channelId: string | undefined,
    ofOrganisation = true,
  ) => refusalFor(policy, { who: { userId }, where: { channelId }, what }, { ofOrganisation, guest: false });

  it('refuses in order: the organisation, then the people listed, then the channels listed', () => {
    expect(ask('read_balance', 'U0FINANCE', 'C0FINANCE', false)).toBe('other_workspace');
    expect(ask('read_balance', 'U0OTHER', 'C0ELSEWHERE')).toBe('user_not_allowed');
    expect(ask('read_balance', 'U0FINANCE', 'C0ELSEWHERE')).toBe('channel_not_allowed');
    expect(ask('read_balance', 'U0FINANCE', 'C0FINANCE')).toBeUndefined();
  });

  it('shows the balance in no channel (the App Home) only when no channel list is set', () => {
    expect(ask('read_balance', 'U0FINANCE', undefined)).toBe('channel_not_allowed');
    expect(
      refusalFor(
        { home: WORKSPACE },
        { who: { userId: 'U0ANYONE' }, where: { channelId: undefined }, what: 'read_balance' },
        { ofOrganisation: true, guest: false },
      ),
    ).toBeUndefined();
  });

  it('lists and stops feeds for listed people anywhere; changes watches and cards for anyone of the organisation', () => {
    expect(ask('read_feeds', 'U0FINANCE', 'C0ELSEWHERE')).toBeUndefined();
    expect(ask('stop_feed', 'U0FINANCE', undefined)).toBeUndefined();
    expect(ask('stop_feed', 'U0OTHER', 'C0FINANCE')).toBe('user_not_allowed');
    expect(ask('start_feed', 'U0FINANCE', 'G0UNLISTED')).toBe('channel_not_allowed');
    for (const what of ['change_watch', 'change_card'] as const) {
      expect(ask(what, 'U0OTHER', 'C0ELSEWHERE')).toBeUndefined();
      expect(ask(what, 'U0FINANCE', 'C0FINANCE', false)).toBe('other_workspace');
    }
  });

  it('lets anyone read an invoice, even someone unknown from another organisation', () => {
    expect(ask('read_invoice', undefined, undefined, false)).toBeUndefined();
  });

  it('refuses balance and feeds to no one in particular (a workflow step) when people are listed', () => {
    expect(ask('read_feeds', undefined, undefined)).toBe('user_not_allowed');
  });

  it('asks the organisation of every action but reading an invoice', () => {
    expect(Object.entries(RULES).filter(([, rule]) => !rule.organisation)).toEqual([
      ['read_invoice', { organisation: false, members: true, users: false, channels: false }],
    ]);
  });

  it('refuses every action to a guest of the organisation itself, listed or not (issue 37)', async () => {
    const access = createAccess(
      { home: GRID, allowedUsers: ['U0SINGLE', 'U0MULTI'] },
      directory(PEOPLE).lookUp,
    );
    for (const userId of ['U0SINGLE', 'U0MULTI'])
      for (const what of Object.keys(RULES) as Action[]) {
        const who = { userId, teamId: 'T0HOME' };
        expect([what, await access.refusal({ who, where: { channelId: 'C1' }, what })]).toEqual([
          what,
          'guest',
        ]);
      }
    expect(Object.values(RULES).every((rule) => rule.members)).toBe(true);
  });

  it('asks the directory whether a member of the bot’s own team is a guest, and nothing more', async () => {
    const dir = directory(PEOPLE);
    const access = createAccess({ home: GRID }, dir.lookUp);
    const who = { userId: 'U0MEMBER', teamId: 'T0HOME' };
    expect(await access.refusal({ who, where: { channelId: 'C1' }, what: 'change_watch' })).toBeUndefined();
    expect(dir.asked).toEqual(['U0MEMBER']);
  });

  it('refuses another team without a look-up when the bot belongs to no organisation', async () => {
    const dir = directory(PEOPLE);
    const access = createAccess({ home: WORKSPACE }, dir.lookUp);
    const who = { userId: 'W0SISTER', teamId: 'T0SISTER' };
    expect(await access.refusal({ who, where: { channelId: 'C1' }, what: 'change_card' })).toBe(
      'other_workspace',
    );
    expect(dir.asked).toEqual([]);
  });

  it.each([
    ['a workspace inside an organisation', GRID],
    ['an organisation-wide install', ORG_WIDE],
  ])('looks up another team’s member for %s: the same organisation in, a guest out', async (_label, home) => {
    const dir = directory(PEOPLE);
    const access = createAccess({ home }, dir.lookUp);
    const ask = (userId: string, teamId: string) =>
      access.refusal({ who: { userId, teamId }, where: { channelId: 'C1' }, what: 'read_balance' });
    expect(await ask('W0SISTER', 'T0SISTER')).toBeUndefined();
    expect(await ask('U0GUEST', 'T0GUEST')).toBe('other_workspace');
    expect(dir.asked).toEqual(['W0SISTER', 'U0GUEST']);
  });

  it('refuses someone the directory does not know', async () => {
    const access = createAccess({ home: GRID }, directory({}).lookUp);
    const who = { userId: 'U0GONE', teamId: 'T0ELSEWHERE' };
    expect(await access.refusal({ who, where: { channelId: 'C1' }, what: 'change_watch' })).toBe(
      'other_workspace',
    );
  });

  it('lets someone of another organisation read an invoice, but not a guest of this one', async () => {
    const access = createAccess({ home: GRID }, directory(PEOPLE).lookUp);
    const read = (userId: string, teamId: string) =>
      access.refusal({ who: { userId, teamId }, where: { channelId: 'C1' }, what: 'read_invoice' });
    expect(await read('U0GUEST', 'T0GUEST')).toBeUndefined();
    expect(await read('U0SINGLE', 'T0HOME')).toBe('guest');
  });

  it('throws a refusal that says what was asked and where the balance may be read', async () => {
    const access = createAccess(
      { home: WORKSPACE, allowedChannels: ['C0FINANCE'] },
      directory(PEOPLE).lookUp,
    );
    const error = await access
      .demand({
        who: { userId: 'U0MEMBER', teamId: 'T0HOME' },
        where: { channelId: 'C1' },
        what: 'start_feed',
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AccessDeniedError);
    expect(error).toMatchObject({
      refusal: 'channel_not_allowed',
      what: 'start_feed',
      allowedChannels: ['C0FINANCE'],
    });
    expect(access.allowedChannels).toEqual(['C0FINANCE']);
  });

  it('tells whoIs a person’s own team from the directory', async () => {
    const access = createAccess({ home: GRID }, directory(PEOPLE).lookUp);
    expect(await access.whoIs('W0SISTER')).toEqual({ userId: 'W0SISTER', teamId: 'T0SISTER' });
    expect(await access.whoIs('U0NOBODY')).toEqual({ userId: 'U0NOBODY', teamId: undefined });
  });
});

describe('asking without a person', () => {
  it('refuses the balance to a request that names no one, without a look-up', async () => {
    const dir = directory({});
    const access = createAccess({ home: GRID }, async (userId) => {
      await dir.lookUp(userId);
      return PEOPLE.U0MEMBER;
    });
    const asked = { who: { userId: undefined }, where: { channelId: undefined } };
    expect(await access.refusal({ ...asked, what: 'read_balance' })).toBe('other_workspace');
    expect(dir.asked).toEqual([]);
  });

  it('names no channel where the balance may be read when no channel list is set', () => {
    expect(createAccess({ home: WORKSPACE }, async () => undefined).allowedChannels).toEqual([]);
  });
});

describe('the directory (users.info)', () => {
  /** A users.info stand-in: counts calls, answers from `teams`, fails for `fail` ids. */
  function users(fail: Record<string, Error> = {}) {
    const calls: string[] = [];
    const client: UsersClient = {
      users: {
        info: async ({ user }) => {
          calls.push(user);
          const error = fail[user];
          if (error) throw error;
          return { user: { team_id: `T${user}`, enterprise_user: { enterprise_id: 'E0ORG' } } };
        },
      },
    };
    return { client, calls };
  }
  const notFound = () =>
    Object.assign(Object.create(webApi.WebAPIPlatformError.prototype) as Error, {
      data: { ok: false, error: 'user_not_found' },
    });

  it('reads the person’s team and organisation, once per person while fresh, sharing concurrent asks', async () => {
    const { client, calls } = users();
    let now = 0;
    const results: string[] = [];
    const lookUp = createDirectory(client, { ttlMs: 1000, clock: () => now, onCall: (r) => results.push(r) });
    const [a, b] = await Promise.all([lookUp('U1'), lookUp('U1')]);
    expect(a).toEqual({ teamId: 'TU1', enterpriseId: 'E0ORG', guest: false });
    expect(b).toBe(a);
    now = 999;
    await lookUp('U1');
    expect(calls).toEqual(['U1']);
    now = 1000;
    await lookUp('U1');
    expect(calls).toEqual(['U1', 'U1']);
    expect(results).toEqual(['ok', 'ok']);
  });

  it('tells a single-channel (`is_ultra_restricted`) or multi-channel (`is_restricted`) guest', async () => {
    const flags: Record<string, Record<string, boolean>> = {
      U0SINGLE: { is_ultra_restricted: true, is_restricted: true },
      U0MULTI: { is_restricted: true },
      U0MEMBER: { is_restricted: false },
    };
    const lookUp = createDirectory({
      users: { info: async ({ user }) => ({ user: { team_id: 'T0HOME', ...flags[user] } }) },
    });
    const guests = await Promise.all(Object.keys(flags).map(async (id) => (await lookUp(id))?.guest));
    expect(guests).toEqual([true, true, false]);
  });

  it('keeps at most `max` people, forgetting the oldest first', async () => {
    const { client, calls } = users();
    const lookUp = createDirectory(client, { max: 2 });
    for (const id of ['U1', 'U2', 'U3', 'U2', 'U1']) await lookUp(id);
    expect(calls).toEqual(['U1', 'U2', 'U3', 'U1']);
  });

  it('answers undefined for someone Slack does not know, and keeps that answer', async () => {
    const { client, calls } = users({ U0GONE: notFound() });
    const lookUp = createDirectory(client);
    expect(await lookUp('U0GONE')).toBeUndefined();
    expect(await lookUp('U0GONE')).toBeUndefined();
    expect(calls).toEqual(['U0GONE']);
  });

  it('throws any other failure and asks again next time', async () => {
    const failures = { U1: new Error('socket hang up') };
    const { client, calls } = users(failures);
    const results: string[] = [];
    const lookUp = createDirectory(client, { onCall: (r) => results.push(r) });
    await expect(lookUp('U1')).rejects.toThrow('socket hang up');
    delete (failures as Partial<typeof failures>).U1;
    expect(await lookUp('U1')).toEqual({ teamId: 'TU1', enterpriseId: 'E0ORG', guest: false });
    expect(calls).toEqual(['U1', 'U1']);
    expect(results).toEqual(['error', 'ok']);
  });
});

describe('who may manage an installation’s payment account', () => {
  const workspace = {
    home: { teamId: 'T0SHOP', enterpriseId: 'E0GRID' },
    enterpriseInstall: false,
    managerId: 'U0BOSS',
  };
  const org = {
    home: { teamId: 'E0GRID', enterpriseId: 'E0GRID' },
    enterpriseInstall: true,
    managerId: 'U0BOSS',
  };
  const standing = (over: Partial<Standing>): Standing => ({
    teamId: 'T0SHOP',
    enterpriseId: 'E0GRID',
    workspaceAdmin: false,
    organisationAdmin: false,
    limited: false,
    ...over,
  });

  it('lets its manager, and an admin or owner of its own workspace, whoever installed last', () => {
    expect(mayManageAccount(workspace, 'U0BOSS', undefined)).toBe(true);
    expect(mayManageAccount(workspace, 'U0ADMIN', standing({ workspaceAdmin: true }))).toBe(true);
    expect(mayManageAccount(workspace, 'U0MEMBER', standing({}))).toBe(false);
    expect(mayManageAccount(workspace, 'U0NOBODY', undefined)).toBe(false);
  });

  it('refuses an admin of another workspace, even of the same organisation', () => {
    expect(
      mayManageAccount(workspace, 'U0OTHER', standing({ teamId: 'T0OTHER', workspaceAdmin: true })),
    ).toBe(false);
    expect(
      mayManageAccount(
        workspace,
        'U0OTHER',
        standing({ teamId: 'T0OTHER', workspaceAdmin: true, organisationAdmin: true }),
      ),
    ).toBe(false);
  });

  it('asks an organisation-wide install’s organisation admins, not one workspace’s', () => {
    expect(mayManageAccount(org, 'U0WSADMIN', standing({ workspaceAdmin: true }))).toBe(false);
    expect(mayManageAccount(org, 'U0ORGADMIN', standing({ teamId: 'T0ANY', organisationAdmin: true }))).toBe(
      true,
    );
    expect(
      mayManageAccount(org, 'U0STRANGER', standing({ enterpriseId: 'E0ELSE', organisationAdmin: true })),
    ).toBe(false);
  });

  it('refuses a guest, a deactivated account or a bot, admin or not', () => {
    expect(mayManageAccount(workspace, 'U0GUEST', standing({ workspaceAdmin: true, limited: true }))).toBe(
      false,
    );
    expect(mayManageAccount(org, 'U0GUEST', standing({ organisationAdmin: true, limited: true }))).toBe(
      false,
    );
  });
});
