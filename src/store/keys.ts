/**
 * An installation's id, and the keys of what an installation owns in the store's shared
 * key/value tables: `service_state` (small facts such as "the service rejects this key") and
 * `seen_events` (Slack event ids already handled). Each names its installation, so that
 * uninstalling finds and deletes them.
 */

/**
 * An installation's id, as the store keys its rows: a Slack team id (`T…`), an organisation's
 * enterprise id (`E…`) for an organisation-wide install, or '' for the one workspace. Branded so
 * that a plain string (a channel, a user, a key) cannot be passed where an installation is meant:
 * `installationId` is the one way to make one.
 */
export type InstallationId = string & { readonly __brand: 'InstallationId' };

/** Slack's team and enterprise ids: capitals and digits, so no `like` wildcard, `:` or `/` of a key or lane. */
const SLACK_ID = /^[A-Z0-9]+$/;

/** An installation id from outside data (Slack, the environment, a test); throws on anything else. */
export function installationId(raw: string): InstallationId {
  if (raw !== '' && !SLACK_ID.test(raw)) throw new TypeError('not a Slack team or enterprise id');
  return raw as InstallationId;
}

/** The one workspace's installation id: it is set up from the environment, not stored. */
export const ONE_WORKSPACE: InstallationId = installationId('');

/** What a stored installation's `keyRejectedKey` starts with, before its id. */
export const KEY_REJECTED_OF = 'payment_key_rejected:';

/** "The payment service rejects this installation's key", since the row's `updated_at`. */
export const keyRejectedKey = (installation: InstallationId): string =>
  installation === ONE_WORKSPACE ? 'payment_key_rejected' : `${KEY_REJECTED_OF}${installation}`;

/** When this installation's rejected key was last tried (`updated_at`): one probe a minute, all instances together. */
export const keyProbeKey = (installation: InstallationId): string => `payment_key_probe:${installation}`;

/** A `like` pattern for every `service_state` key of an installation (they end in `:<id>`). */
export const ownStateKeys = (installation: InstallationId): string => `%:${installation}`;

/** A Slack event id as one installation saw it: a retry is recognised within that installation. */
export const eventKey = (installation: InstallationId, key: string): string => `${installation}:${key}`;

/** A `seen_events` key of an installation's: the one workspace's keys go unprefixed, as they always have. */
export const seenKey = (installation: InstallationId, key: string): string =>
  installation === ONE_WORKSPACE ? key : eventKey(installation, key);

/** A `like` pattern for every `seen_events` id of an installation. */
export const ownEventKeys = (installation: InstallationId): string => eventKey(installation, '%');
