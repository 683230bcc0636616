import { describe, expect, it } from 'vitest';
import { AccessDeniedError, createAccess, mayManageAccount } from '../src/access.js';

const home = { teamId: 'T0HOME', enterpriseId: undefined };

describe('access, at the edges', () => {
  it('lets no workspace admin manage an organisation-wide install when the home names no organisation', () => {
    const standing = {
      teamId: 'T0HOME',
      enterpriseId: undefined,
      workspaceAdmin: true,
      organisationAdmin: true,
      limited: false,
    };
    const account = { home, enterpriseInstall: true, managerId: 'U0MANAGER' };
    expect(mayManageAccount(account, 'U0ADMIN', standing)).toBe(false);
    expect(mayManageAccount(account, 'U0MANAGER', standing)).toBe(true);
  });

  it('knows no time zone for someone Slack does not know', async () => {
    const access = createAccess({ home }, async () => undefined);
    expect(await access.timeZoneOf('U0GONE')).toBeUndefined();
    const known = createAccess({ home }, async () => ({
      teamId: 'T0HOME',
      enterpriseId: undefined,
      timeZone: 'Asia/Tokyo',
    }));
    expect(await known.timeZoneOf('U1')).toBe('Asia/Tokyo');
  });

  it('tells people whom to ask unless the operator says the lists are not theirs to show', async () => {
    const directory = async () => ({ teamId: 'T0HOME', enterpriseId: undefined });
    const listed = createAccess({ home, allowedUsers: ['U0OK'] }, directory);
    expect(listed.listable).toBe(true);
    const refused = await listed
      .demand({ who: { userId: 'U0NO', teamId: 'T0HOME' }, where: { channelId: 'C1' }, what: 'read_balance' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AccessDeniedError);
    expect(refused).toMatchObject({ listable: true });
    const unlisted = createAccess({ home, allowedUsers: ['U0OK'], listable: false }, directory);
    expect(unlisted.listable).toBe(false);
  });
});
