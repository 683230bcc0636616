/**
 * The people test/access-surfaces.test.ts asks every surface about, and what each kind of action
 * answers them: members of the bot's workspace (listed in BALANCE_ALLOWED_USERS or not), a
 * member of a sister workspace of the organisation, someone of another organisation (as in a
 * Slack Connect channel), and a single- and a multi-channel guest of the bot's own workspace.
 */
const member = { team: 'T0HOME', enterprise: 'E0ORG', flags: {} };
export const PEOPLE = {
  allowed: { ...member, user: 'U0ALLOWED' },
  unlisted: { ...member, user: 'U0UNLISTED' },
  sister: { user: 'W0SISTER', team: 'T0SISTER', enterprise: 'E0ORG', flags: {} },
  outsider: { user: 'U0OUTSIDER', team: 'T0OUTSIDE', enterprise: 'E0OTHER', flags: {} },
  singleGuest: {
    ...member,
    user: 'U0SINGLEGUEST',
    flags: { is_restricted: true, is_ultra_restricted: true },
  },
  multiGuest: { ...member, user: 'U0MULTIGUEST', flags: { is_restricted: true } },
} as const;
export type Person = (typeof PEOPLE)[keyof typeof PEOPLE];
export type Answers = Record<keyof typeof PEOPLE, string>;
// Everyone but the unlisted member is in BALANCE_ALLOWED_USERS: the outsider and the guests are refused all the same.
export const ALLOWED_USERS = Object.values(PEOPLE)
  .filter((p) => p !== PEOPLE.unlisted)
  .map((p) => p.user)
  .join(',');

const GUESTS = { singleGuest: 'guest', multiGuest: 'guest' } as const;
/** The balance and the feeds. */
export const BALANCE: Answers = {
  allowed: 'ok',
  unlisted: 'user_not_allowed',
  sister: 'ok',
  outsider: 'other_workspace',
  ...GUESTS,
};
/** Changing what a channel is told: watches, shared and refreshed cards. */
export const CHANGE: Answers = {
  allowed: 'ok',
  unlisted: 'ok',
  sister: 'ok',
  outsider: 'other_workspace',
  ...GUESTS,
};
/** Reading an invoice by its id: anyone but a guest. */
export const READ: Answers = { allowed: 'ok', unlisted: 'ok', sister: 'ok', outsider: 'ok', ...GUESTS };
/** A surface that acts for no person (the workflow step): the same for all. */
export const NOBODY: Answers = { ...READ, singleGuest: 'ok', multiGuest: 'ok' };

/** auth.test of a workspace inside an organisation, and of an organisation-wide token (docs/slack.md#install). */
export const SHAPES = [
  ['a workspace of an Enterprise Grid organisation', { team_id: 'T0HOME', enterprise_id: 'E0ORG' }],
  [
    'an organisation-wide install',
    {
      team_id: 'E0ORG',
      enterprise_id: 'E0ORG',
      is_enterprise_install: true,
      url: 'https://org.enterprise.slack.test/',
    },
  ],
] as const;
