import type { Logger } from './logger.js';
import type { BreakerState } from './payments/index.js';
import type { Store } from './store/database.js';
import { type InstallationId, keyProbeKey, keyRejectedKey, ONE_WORKSPACE } from './store/keys.js';
import type { KeySource } from './views/key.js';

/** While the key is rejected, background work tries one call this often to see if it works again. */
export const KEY_PROBE_MS = 60_000;

/**
 * What all instances know about the payment service, kept in the store: whether it rejects the
 * API key. Background work pauses while it does; the change is logged once, by the instance that
 * saw it first, in each direction.
 */
export interface ServiceState {
  /** Where the key comes from: what a person is told to fix when it is rejected. */
  readonly keySource: KeySource;
  /** Since when the key has been rejected, if it is. */
  keyRejectedSince(): Promise<number | undefined>;
  markKeyRejected(now: number): Promise<void>;
  markKeyAccepted(): Promise<void>;
  /**
   * Background work's claim, within what the service and the key allow: nothing while the
   * service's circuit breaker is open, one item (the breaker's probe) once it is half-open;
   * otherwise `claim(wanted)`, or while the key is rejected one probe (`claim(1)`) per
   * KEY_PROBE_MS across every job of this instance; nothing claimed, no probe spent.
   */
  claimWithin<T>(now: number, wanted: number, claim: (limit: number) => Promise<T[]>): Promise<T[]>;
  /**
   * Whether this installation's background work may call the service now: always while its key
   * is not rejected; while it is, once per KEY_PROBE_MS across every instance (the probe that
   * sees when it works again). Many workspaces: a claim serves many installations, so each is
   * gated when its work runs.
   */
  mayProbe(now: number): Promise<boolean>;
}

export function serviceState(
  store: Store,
  logger: Logger,
  scope: {
    /** Whose key this is about: ONE_WORKSPACE for the environment's key, else the installation's. */
    installation: InstallationId;
    /** The payment service's circuit breaker; always closed where none is given. */
    circuit?: () => BreakerState;
    /**
     * Many workspaces: when the account whose key this is was connected. What a call with it says
     * of the key is kept only while that account is still the installation's: a call in flight
     * across a Replace key says nothing of the new key.
     */
    account?: number;
  },
): ServiceState {
  const { installation, circuit = () => 'closed', account } = scope;
  const { db } = store;
  const rejected = keyRejectedKey(installation);
  const oneWorkspace = installation === ONE_WORKSPACE;
  const keyName = oneWorkspace ? 'PAYMENT_API_KEY' : 'the workspace’s payment API key';
  let lastProbe = Number.NEGATIVE_INFINITY;

  const since = async () =>
    (await db.selectFrom('service_state').select('updated_at').where('key', '=', rejected).executeTakeFirst())
      ?.updated_at;

  return {
    keySource: oneWorkspace ? 'configuration' : 'workspace',
    keyRejectedSince: since,

    async markKeyRejected(now) {
      const mark = { key: rejected, value: 'rejected', updated_at: now };
      const insert = db.insertInto('service_state');
      const result = await (account === undefined
        ? insert.values(mark)
        : insert.columns(['key', 'value', 'updated_at']).expression((eb) =>
            eb
              .selectFrom('installations')
              .select([
                eb.val(mark.key).as('key'),
                eb.val(mark.value).as('value'),
                eb.val(now).as('updated_at'),
              ])
              .where('id', '=', installation)
              .where('payment_key_connected_at', '=', account),
          )
      )
        .onConflict((oc) => oc.column('key').doNothing())
        .executeTakeFirst();
      if (Number(result.numInsertedOrUpdatedRows ?? 0) > 0) {
        logger.error(
          `the payment service rejects ${keyName}: watches and feeds are paused until it works again`,
        );
      }
    },

    async markKeyAccepted() {
      const result = await db
        .deleteFrom('service_state')
        .where('key', '=', rejected)
        .$if(account !== undefined, (q) =>
          q.where((eb) =>
            eb.exists(
              eb
                .selectFrom('installations')
                .select('id')
                .where('id', '=', installation)
                .where('payment_key_connected_at', '=', account as number),
            ),
          ),
        )
        .executeTakeFirst();
      if (result.numDeletedRows > 0n)
        logger.info(`the payment service accepts ${keyName} again: watches and feeds resume`);
    },

    async mayProbe(now) {
      if ((await since()) === undefined) return true;
      const probe = { key: keyProbeKey(installation), value: 'probe', updated_at: now };
      const taken = await db
        .insertInto('service_state')
        .values(probe)
        .onConflict((oc) =>
          oc
            .column('key')
            .doUpdateSet({ updated_at: now })
            .where('service_state.updated_at', '<=', now - KEY_PROBE_MS),
        )
        .returning('key')
        .executeTakeFirst();
      return taken !== undefined;
    },

    async claimWithin(now, wanted, claim) {
      const breaker = circuit();
      if (breaker !== 'closed') return breakerGate(circuit).claimWithin(now, wanted, claim);
      if ((await since()) === undefined) return claim(wanted);
      if (now - lastProbe < KEY_PROBE_MS) return [];
      const rows = await claim(1);
      if (rows.length > 0) lastProbe = now;
      return rows;
    },
  };
}

/**
 * Of these installations, those whose key the service is known to reject, in one read: the
 * rest's background work calls without asking again (`mayProbe` is asked for these alone). Many
 * workspaces read it with the installations' summaries (`InstallationSummary.keyRejected`).
 */
export async function rejectedAmong(
  store: Store,
  installations: readonly InstallationId[],
): Promise<Set<InstallationId>> {
  if (installations.length === 0) return new Set();
  const rows = await store.db
    .selectFrom('service_state')
    .select('key')
    .where('key', 'in', installations.map(keyRejectedKey))
    .execute();
  const rejected = new Set(rows.map((r) => r.key));
  return new Set(installations.filter((id) => rejected.has(keyRejectedKey(id))));
}

/**
 * Background work's claim within what the service's circuit breaker allows alone: nothing while
 * it is open, one item (its probe) while half-open. Many workspaces: each installation's key is
 * gated when its work is served (`mayProbe`), not the claim.
 */
export function breakerGate(circuit: () => BreakerState): Pick<ServiceState, 'claimWithin'> {
  return {
    async claimWithin(_now, wanted, claim) {
      const breaker = circuit();
      if (breaker === 'open') return [];
      return claim(breaker === 'half_open' ? 1 : wanted);
    },
  };
}
