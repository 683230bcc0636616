import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/database.js';
import { createInstallations } from '../../src/store/installations.js';
import { prepareSealing } from '../../src/store/rotation.js';
import { createSealer, keyIdOf, sealedKeyId } from '../../src/store/sealing.js';
import { install, NOW } from '../support/installations-contract.js';
import { keyIdsIn, rotationContract } from '../support/key-rotation-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'bot-rotation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
const fresh = () => {
  n += 1;
  return openStore({ kind: 'sqlite', path: join(dir, String(n), 'bot.sqlite') });
};

rotationContract('SQLite', fresh);

describe('sealing again at start', () => {
  it('reaches every installation, however many: the new key alone then opens them all', async () => {
    const store = await fresh();
    const [old, next] = [randomBytes(32), randomBytes(32)];
    await prepareSealing(store, createSealer({ current: old }), NOW);
    const before = createInstallations(store, createSealer({ current: old }), () => NOW);
    const ids = Array.from({ length: 401 }, (_, i) => `T${String(i).padStart(4, '0')}`);
    for (const id of ids) await before.storeInstallation(install(id, `xoxb-${id}-token`));

    expect(await prepareSealing(store, createSealer({ current: next, previous: old }), NOW)).toMatchObject({
      resealed: 402,
      newer: 0,
    });
    expect(await keyIdsIn(store)).toEqual(new Set([keyIdOf(next)]));
    const after = createInstallations(store, createSealer({ current: next }), () => NOW);
    for (const id of [ids[0], ids[199], ids[200], ids[400]] as string[])
      expect(
        (await after.fetchInstallation({ teamId: id, enterpriseId: undefined, isEnterpriseInstall: false }))
          .bot?.token,
      ).toBe(`xoxb-${id}-token`);
    await store.close();
  });
});

describe('the key a stored value names', () => {
  it('is read from a sealed value’s head alone, and nothing is read from anything else', () => {
    const key = randomBytes(32);
    const sealed = createSealer({ current: key }).seal('xoxb-secret', 'installation:T0ONE:bot_token');
    expect(sealedKeyId(sealed)).toBe(keyIdOf(key));
    expect(sealedKeyId(sealed.slice(0, 12))).toBe(keyIdOf(key));
    for (const other of [
      'xoxb-1234-5678-plain-token',
      `v2.${keyIdOf(key)}.rest`,
      // Upper-case hex is no key id: at least one letter of it upper case, whatever the random key.
      `v1.${/[a-f]/.test(keyIdOf(key)) ? keyIdOf(key).toUpperCase() : keyIdOf(key).replace(/[0-9]/, 'A')}.rest`,
      `v1.${keyIdOf(key)}0.rest`,
      `xv1.${keyIdOf(key)}.rest`,
      `v1x${keyIdOf(key)}.rest`,
    ])
      expect(sealedKeyId(other), other).toBeUndefined();
  });

  it('a stored value that does not read as sealed names no key: no start is refused for it, none quotes it', async () => {
    const store = await fresh();
    const key = randomBytes(32);
    await prepareSealing(store, createSealer({ current: key }), NOW);
    await createInstallations(store, createSealer({ current: key }), () => NOW).storeInstallation(
      install('T0ONE', 'xoxb-one-secret-token'),
    );
    await store.db.updateTable('installations').set({ bot_token: 'xoxb-plain-text-token' }).execute();
    expect(await prepareSealing(store, createSealer({ current: key }), NOW)).toMatchObject({ resealed: 0 });
    const other = await prepareSealing(store, createSealer({ current: randomBytes(32) }), NOW).catch(
      (e: unknown) => e,
    );
    expect(String(other)).toContain(`key ${keyIdOf(key)} sealed the store's check value.`);
    expect(String(other)).not.toContain('xoxb');
    await store.close();
  });
});
