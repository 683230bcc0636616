import { sql, type UpdateResult } from 'kysely';
import type { Store } from './database.js';
import type { InstallationId } from './keys.js';
import { contextOf, SECRETS, type Secret } from './sealed-columns.js';
import { type Sealer, SealingError, sealedKeyId } from './sealing.js';

/**
 * ENCRYPTION_KEY at start, and its rotation with several instances on one database (docs/many-workspaces.md →
 * "Rotating ENCRYPTION_KEY"). A start counts the keys that sealed every stored secret, from the
 * key id at the head of each sealed value (nothing is opened), and refuses, changing nothing,
 * while any was sealed with a key it was not given: a key dropped too early never strands a
 * secret. A start given both keys then seals again, with ENCRYPTION_KEY, whatever the other key
 * sealed, value by value, each only if it is still the value read: a newer write by another
 * instance is never overwritten, and an interrupted pass is finished by the next start.
 *
 * Safe with several instances because of the order of docs/many-workspaces.md: every instance holds the new key
 * (as ENCRYPTION_KEY_PREVIOUS) before any seals with it, so none meets a secret it cannot open.
 */

const CANARY_KEY = 'sealing_canary';
const CANARY_CONTEXT = `service_state:${CANARY_KEY}`;
/** Installations read at once while sealing again. */
const PAGE = 200;
/** `v1.` and the 8-digit key id, then the dot: as much of a sealed value as names its key. */
const HEAD = sql.lit(12);

/** ENCRYPTION_KEY (and ENCRYPTION_KEY_PREVIOUS) do not open what the store holds: the start stops, nothing changed. */
export class SealingKeyError extends Error {
  override readonly name = 'SealingKeyError';
}

/** What a start found and did; key ids only, never a key. */
export interface SealingReport {
  /** ENCRYPTION_KEY's id. */
  keyId: string;
  /** ENCRYPTION_KEY_PREVIOUS's id, when it is set. */
  previousKeyId: string | undefined;
  /** Secrets sealed again with ENCRYPTION_KEY by this start (the store's check value included). */
  resealed: number;
  /** Secrets another instance wrote between this start's read and its write: left as written. */
  newer: number;
}

/**
 * Checks at start that the keys given open every secret in the store (SealingKeyError when not,
 * naming the key ids and how many secrets each sealed), then seals again with ENCRYPTION_KEY what
 * ENCRYPTION_KEY_PREVIOUS sealed. The first start seals a check value (the canary), so a wrong
 * key is refused even before any workspace installs the app.
 */
export async function prepareSealing(store: Store, sealer: Sealer, now: number): Promise<SealingReport> {
  const canary = await store.db
    .selectFrom('service_state')
    .select('value')
    .where('key', '=', CANARY_KEY)
    .executeTakeFirst();
  const byKey = await secretsByKey(store);
  refuseUnknownKeys(sealer, byKey, canary && sealedKeyId(canary.value));
  const report = { keyId: sealer.keyId, previousKeyId: sealer.previousKeyId, resealed: 0, newer: 0 };
  if (!canary) {
    await store.db
      .insertInto('service_state')
      .values({ key: CANARY_KEY, value: sealer.seal(CANARY_KEY, CANARY_CONTEXT), updated_at: now })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
  } else if (openCanary(sealer, canary.value)) {
    const result = await store.db
      .updateTable('service_state')
      .set({ value: sealer.seal(CANARY_KEY, CANARY_CONTEXT), updated_at: now })
      .where('key', '=', CANARY_KEY)
      .where('value', '=', canary.value)
      .executeTakeFirst();
    report[written(result) ? 'resealed' : 'newer'] += 1;
  }
  const stale = [...byKey].some(([keyId]) => keyId === sealer.previousKeyId);
  return stale ? resealSecrets(store, sealer, report) : report;
}

/** How many installation secrets each key sealed, by the key id at their head. Opens nothing. */
async function secretsByKey(store: Store): Promise<Map<string, number>> {
  const byKey = new Map<string, number>();
  for (const column of SECRETS) {
    const head = sql<string>`substr(${sql.ref(column)}, 1, ${HEAD})`;
    const rows = await store.db
      .selectFrom('installations')
      .select([head.as('head'), (eb) => eb.fn.countAll<number | string | bigint>().as('count')])
      .where(column, 'is not', null)
      .groupBy(head)
      .execute();
    for (const { head, count } of rows) {
      // A value that does not read as sealed names no key; opening it fails where it is used.
      const keyId = sealedKeyId(head);
      if (keyId) byKey.set(keyId, (byKey.get(keyId) ?? 0) + Number(count));
    }
  }
  return byKey;
}

/** Refuses the start while any secret, or the check value, was sealed with a key this instance was not given. */
function refuseUnknownKeys(
  sealer: Sealer,
  byKey: Map<string, number>,
  canaryKeyId: string | undefined,
): void {
  const given = new Set([sealer.keyId, sealer.previousKeyId]);
  const unknown = new Set(
    [...byKey.keys(), ...(canaryKeyId ? [canaryKeyId] : [])].filter((id) => !given.has(id)),
  );
  if (unknown.size === 0) return;
  const sealedBy = [...unknown].map((keyId) => {
    const count = byKey.get(keyId) ?? 0;
    const what = [
      ...(count > 0 ? [`${count} secret${count === 1 ? '' : 's'}`] : []),
      ...(keyId === canaryKeyId ? ["the store's check value"] : []),
    ];
    return `key ${keyId} sealed ${what.join(' and ')}`;
  });
  const previous = sealer.previousKeyId ? `key ${sealer.previousKeyId}` : 'not set';
  throw new SealingKeyError(
    `ENCRYPTION_KEY (key ${sealer.keyId}) does not open the secrets in the store, nor does ENCRYPTION_KEY_PREVIOUS (${previous}): ${sealedBy.join('; ')}. ` +
      'Give the key that sealed them as ENCRYPTION_KEY, or as ENCRYPTION_KEY_PREVIOUS while rotating, and finish the steps in docs/many-workspaces.md → "Rotating ENCRYPTION_KEY". Nothing was changed.',
  );
}

/** Whether the check value needs sealing again (it opens with ENCRYPTION_KEY_PREVIOUS); refuses the start when it does not open. */
function openCanary(sealer: Sealer, value: string): boolean {
  try {
    return sealer.open(value, CANARY_CONTEXT).stale;
  } catch (error) {
    if (!(error instanceof SealingError)) throw error;
    throw new SealingKeyError(
      `ENCRYPTION_KEY (key ${sealer.keyId}) does not open the secrets in the store: the store's check value (service_state ${CANARY_KEY}) was sealed with no other key, yet does not open: it was altered. Nothing was changed.`,
      { cause: error },
    );
  }
}

/** Seals again with ENCRYPTION_KEY every secret ENCRYPTION_KEY_PREVIOUS sealed, a page of installations at a time. */
async function resealSecrets(store: Store, sealer: Sealer, report: SealingReport): Promise<SealingReport> {
  let after: InstallationId | undefined;
  for (;;) {
    let page = store.db
      .selectFrom('installations')
      .select(['id', ...SECRETS])
      .orderBy('id')
      .limit(PAGE);
    if (after !== undefined) page = page.where('id', '>', after);
    const rows = await page.execute();
    for (const row of rows) {
      for (const column of SECRETS) {
        const sealed = row[column];
        // Only the previous key's: a value another instance sealed meanwhile with a third key is
        // left for the next start to refuse.
        if (sealed === null || sealedKeyId(sealed) !== sealer.previousKeyId) continue;
        const resealed = await resealOne(store, sealer, row.id, column, sealed);
        report[resealed ? 'resealed' : 'newer'] += 1;
      }
    }
    const last = rows.at(-1);
    if (rows.length < PAGE || !last) return report;
    after = last.id;
  }
}

/** Seals one secret again, only while its column still holds the value read: whether it did. */
async function resealOne(store: Store, sealer: Sealer, id: InstallationId, column: Secret, sealed: string) {
  const context = contextOf(id, column);
  const result = await store.db
    .updateTable('installations')
    .set(column, sealer.seal(sealer.open(sealed, context).plaintext, context))
    .where('id', '=', id)
    .where(column, '=', sealed)
    .executeTakeFirst();
  return written(result);
}

const written = (result: UpdateResult) => result.numUpdatedRows > 0n;
