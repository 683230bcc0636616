import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/database.js';
import { createInstallations } from '../../src/store/installations.js';
import { installationId } from '../../src/store/keys.js';
import { prepareSealing, SealingKeyError } from '../../src/store/rotation.js';
import { createSealer, keyIdOf, type SealingKeys, sealedKeyId } from '../../src/store/sealing.js';
import { install, NOW } from './installations-contract.js';

/**
 * ENCRYPTION_KEY at start and its rotation (src/store/rotation.ts), on each database the bot
 * supports: each `fresh()` is a new, empty store, closed by the test.
 */

const OLD = randomBytes(32);
const NEW = randomBytes(32);
const THIRD = randomBytes(32);

/** Every way a key could be written out: none may appear in a message. */
export const spellings = (...keys: Buffer[]): string[] =>
  keys.flatMap((k) => [k.toString('base64'), k.toString('base64url'), k.toString('hex')]);

export const refusal = (promise: Promise<unknown>): Promise<SealingKeyError> =>
  promise.then(
    () => expect.fail('the start was not refused'),
    (error: unknown) => {
      expect(error).toBeInstanceOf(SealingKeyError);
      return error as SealingKeyError;
    },
  );

/** The key ids of every sealed value in the store, the check value included. */
export async function keyIdsIn(store: Store): Promise<Set<string | undefined>> {
  const rows = await store.db
    .selectFrom('installations')
    .select(['bot_token', 'bot_refresh_token', 'payment_api_key'])
    .execute();
  const state = await store.db.selectFrom('service_state').select('value').execute();
  const values = [...rows.flatMap((r) => Object.values(r)), ...state.map((s) => s.value)];
  return new Set(values.filter((v): v is string => v !== null).map(sealedKeyId));
}

export function rotationContract(name: string, fresh: () => Promise<Store>): void {
  describe(`rotating ENCRYPTION_KEY, on ${name}`, () => {
    const query = (teamId: string) => ({ teamId, enterpriseId: undefined, isEnterpriseInstall: false });
    const everything = async (store: Store) => ({
      installations: await store.db.selectFrom('installations').selectAll().orderBy('id').execute(),
      state: await store.db.selectFrom('service_state').selectAll().orderBy('key').execute(),
    });

    it('refuses a start while any secret is sealed with a key it was not given, by name and count, never a key, changing nothing', async () => {
      const store = await fresh();
      const on = (keys: SealingKeys) => createInstallations(store, createSealer(keys), () => NOW);
      await prepareSealing(store, createSealer({ current: OLD }), NOW);
      const before = on({ current: OLD });
      await before.storeInstallation(install('T0ONE', 'xoxb-one-secret-token'));
      await before.connectPaymentKey(installationId('T0ONE'), 'key-one', 'U1', NOW);

      // One instance restarted with both keys seals everything again ...
      expect(await prepareSealing(store, createSealer({ current: NEW, previous: OLD }), NOW)).toEqual({
        keyId: keyIdOf(NEW),
        previousKeyId: keyIdOf(OLD),
        resealed: 3, // the token, the payment key, the check value
        newer: 0,
      });
      // ... while one not yet restarted still seals with the old key.
      const notRestarted = on({ current: OLD });
      await notRestarted.storeInstallation(install('T0TWO', 'xoxb-two-secret-token'));
      await notRestarted.connectPaymentKey(installationId('T0TWO'), 'key-two', 'U1', NOW);

      // The old key dropped now would strand those two: the start is refused, and says why.
      const stored = await everything(store);
      const dropped = await refusal(prepareSealing(store, createSealer({ current: NEW }), NOW));
      expect(dropped.message).toBe(
        `ENCRYPTION_KEY (key ${keyIdOf(NEW)}) does not open the secrets in the store, nor does ENCRYPTION_KEY_PREVIOUS (not set): key ${keyIdOf(OLD)} sealed 2 secrets. Give the key that sealed them as ENCRYPTION_KEY, or as ENCRYPTION_KEY_PREVIOUS while rotating, and finish the steps in docs/many-workspaces.md → "Rotating ENCRYPTION_KEY". Nothing was changed.`,
      );
      const third = await refusal(
        prepareSealing(store, createSealer({ current: NEW, previous: THIRD }), NOW),
      );
      expect(third.message).toContain(
        `nor does ENCRYPTION_KEY_PREVIOUS (key ${keyIdOf(THIRD)}): key ${keyIdOf(OLD)} sealed 2 secrets.`,
      );
      for (const spelling of spellings(OLD, NEW, THIRD)) {
        expect(dropped.message).not.toContain(spelling);
        expect(third.message).not.toContain(spelling);
      }
      expect(await everything(store)).toEqual(stored);

      // With the old key given again, the start seals those two again; then the new key alone opens all.
      expect(await prepareSealing(store, createSealer({ current: NEW, previous: OLD }), NOW)).toMatchObject({
        resealed: 2,
        newer: 0,
      });
      expect(await prepareSealing(store, createSealer({ current: NEW }), NOW)).toMatchObject({ resealed: 0 });
      const after = on({ current: NEW });
      expect((await after.fetchInstallation(query('T0ONE'))).bot?.token).toBe('xoxb-one-secret-token');
      expect((await after.fetchInstallation(query('T0TWO'))).bot?.token).toBe('xoxb-two-secret-token');
      expect([
        await after.paymentKeyOf(installationId('T0ONE')),
        await after.paymentKeyOf(installationId('T0TWO')),
      ]).toEqual(['key-one', 'key-two']);
      expect(await keyIdsIn(store)).toEqual(new Set([keyIdOf(NEW)]));
      await store.close();
    });

    it('refuses another key before any workspace installed the app, naming the key of the check value', async () => {
      const store = await fresh();
      await prepareSealing(store, createSealer({ current: OLD }), NOW);
      const error = await refusal(prepareSealing(store, createSealer({ current: NEW }), NOW));
      expect(error.message).toContain(
        `ENCRYPTION_KEY_PREVIOUS (not set): key ${keyIdOf(OLD)} sealed the store's check value.`,
      );
      expect(await prepareSealing(store, createSealer({ current: OLD }), NOW)).toMatchObject({ resealed: 0 });
      await store.close();
    });
  });
}
