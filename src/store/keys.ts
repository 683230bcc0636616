/**
 * The keys of what an installation owns in the store's shared key/value tables: `service_state`
 * (small facts such as "the service rejects this key") and `seen_events` (Slack event ids already
 * handled). Each names its installation, so that uninstalling finds and deletes them.
 */

/** The one workspace's installation id: it is set up from the environment, not stored. */
export const ONE_WORKSPACE = '';

/** "The payment service rejects this installation's key", since the row's `updated_at`. */
export const keyRejectedKey = (installation: string): string =>
  installation === ONE_WORKSPACE ? 'payment_key_rejected' : `payment_key_rejected:${installation}`;

/** When this installation's rejected key was last tried (`updated_at`): one probe a minute, all instances together. */
export const keyProbeKey = (installation: string): string => `payment_key_probe:${installation}`;

/** A `like` pattern for every `service_state` key of an installation (they end in `:<id>`). */
export const ownStateKeys = (installation: string): string => `%:${installation}`;

/** A Slack event id as one installation saw it: a retry is recognised within that installation. */
export const eventKey = (installation: string, key: string): string => `${installation}:${key}`;

/** A `like` pattern for every `seen_events` id of an installation. */
export const ownEventKeys = (installation: string): string => eventKey(installation, '%');
