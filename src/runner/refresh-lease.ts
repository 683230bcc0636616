import type { Store } from '../store/database.js';
import { whileInstalled } from '../store/installed.js';
import type { InstallationId } from '../store/keys.js';
import { freeAt } from './leases.js';

/** The `singletons` row that says which instance is refreshing an installation's bot token. */
const TOKEN_REFRESH = 'token_refresh';

/**
 * Takes the right to refresh an installation's rotating token, all instances together: Slack
 * hands out two tokens to two refreshes of one refresh token, and one of them is invalid
 * (node-slack-sdk #2504). A lease row, not a lock held on a connection: nothing holds a pooled
 * connection or a transaction while Slack is asked, so any number of installations refreshing
 * at once never wait on each other for a connection. True when `owner` holds it until
 * `now + leaseMs`; false while another instance does, or once the installation is uninstalled.
 */
export async function claimRefresh(
  store: Store,
  installation: InstallationId,
  owner: string,
  now: number,
  leaseMs: number,
): Promise<boolean> {
  const lease = { lease_owner: owner, lease_until: now + leaseMs, next_run_at: now };
  const claimed = await store.db
    .insertInto('singletons')
    .columns(['installation_id', 'name', 'last_success_at', 'lease_owner', 'lease_until', 'next_run_at'])
    // Only while the installation is there: a refresh in flight during an uninstall re-creates nothing.
    .expression(
      whileInstalled(
        store.db,
        installation,
        installation,
        TOKEN_REFRESH,
        { null: 'bigint' },
        owner,
        lease.lease_until,
        now,
      ),
    )
    .onConflict((oc) =>
      oc.columns(['installation_id', 'name']).doUpdateSet(lease).where(freeAt('singletons', now)),
    )
    .returning('lease_owner')
    .executeTakeFirst();
  return claimed !== undefined;
}

/** The refresh lease row while `owner` holds it, for an update fenced by its holder. */
const heldBy = (store: Store, installation: InstallationId, owner: string) =>
  store.db
    .updateTable('singletons')
    .where('installation_id', '=', installation)
    .where('name', '=', TOKEN_REFRESH)
    .where('lease_owner', '=', owner);

/** Lets the refresh go (done, or failed): the next instance that needs one may take it at once. */
export async function releaseRefresh(
  store: Store,
  installation: InstallationId,
  owner: string,
): Promise<void> {
  await heldBy(store, installation, owner).set({ lease_owner: null, lease_until: null }).execute();
}

/**
 * Keeps `owner`'s refresh lease for `leaseMs` more: while a refreshed token is not written yet,
 * no other instance may refresh with the refresh token Slack has replaced. True while it holds.
 */
export async function holdRefresh(
  store: Store,
  installation: InstallationId,
  owner: string,
  now: number,
  leaseMs: number,
): Promise<boolean> {
  const result = await heldBy(store, installation, owner)
    .set({ lease_until: now + leaseMs })
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
