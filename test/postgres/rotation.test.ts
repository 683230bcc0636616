import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { createInstallations, type Installations } from '../../src/store/installations.js';
import { type InstallationId, installationId } from '../../src/store/keys.js';
import { prepareSealing, type SealingReport } from '../../src/store/rotation.js';
import { createSealer, keyIdOf, type SealingKeys } from '../../src/store/sealing.js';
import { install, NOW } from '../support/installations-contract.js';
import { keyIdsIn, refusal, rotationContract, spellings } from '../support/key-rotation-contract.js';
import { freshDatabase } from '../support/postgres-server.js';

const server = inject('postgresUrl');

rotationContract('PostgreSQL', async () => openStore({ kind: 'postgres', url: await freshDatabase(server) }));

const OLD = randomBytes(32);
const NEW = randomBytes(32);
const query = (teamId: string) => ({ teamId, enterpriseId: undefined, isEnterpriseInstall: false });

/** One instance of the bot: its own connections to the shared database, and the keys it was started with. */
interface Instance {
  name: string;
  store: Store;
  installations: Installations;
  report: SealingReport;
}

/** Strictly later on every call, whichever instance asks: each write is newer than the one before. */
let tick = NOW;
const clock = () => ++tick;

/** Starts an instance as src/main.ts does: the start check, then the installations with its keys. */
async function start(url: string, name: string, keys: SealingKeys): Promise<Instance> {
  const store = await openStore({ kind: 'postgres', url });
  const sealer = createSealer(keys);
  try {
    const report = await prepareSealing(store, sealer, clock());
    return { name, store, installations: createInstallations(store, sealer, clock), report };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * Two instances' traffic on one database: each writes its own three workspaces' token and key,
 * `readsAll` checks that every instance opens what was last written anywhere.
 */
function traffic(url: string) {
  /** What each workspace's secrets were last written as; each instance writes its own workspaces. */
  const latest = new Map<InstallationId, { token: string; apiKey: string }>();
  let round = 0;
  const writes = async (instance: Instance) => {
    round += 1;
    for (const n of [1, 2, 3]) {
      const id = installationId(`T0${instance.name}${n}`);
      const secrets = { token: `xoxb-${id}-${round}`, apiKey: `key-${id}-${round}` };
      await instance.installations.storeInstallation(install(id, secrets.token));
      await instance.installations.connectPaymentKey(id, secrets.apiKey, 'U1', clock());
      latest.set(id, secrets);
    }
  };
  const readsAll = async (...instances: Instance[]) => {
    for (const instance of instances)
      for (const [id, secrets] of latest) {
        expect((await instance.installations.fetchInstallation(query(id))).bot?.token, instance.name).toBe(
          secrets.token,
        );
        expect(await instance.installations.paymentKeyOf(id), instance.name).toBe(secrets.apiKey);
      }
  };
  /** A rolling restart of one instance: the old process finishes a request after the new one started. */
  const restart = async (old: Instance, keys: SealingKeys, other?: Instance) => {
    const [next] = await Promise.all([start(url, old.name, keys), other && writes(other), writes(old)]);
    await writes(old);
    await old.store.close();
    return next;
  };
  /** A start with the old key dropped: refused, changing nothing; what it said. */
  const withNewKeyOnly = async () => {
    const store = await openStore({ kind: 'postgres', url });
    const before = await store.db.selectFrom('installations').selectAll().orderBy('id').execute();
    const error = await refusal(prepareSealing(store, createSealer({ current: NEW }), clock()));
    expect(await store.db.selectFrom('installations').selectAll().orderBy('id').execute()).toEqual(before);
    await store.close();
    return error.message;
  };
  return { writes, readsAll, restart, withNewKeyOnly };
}

describe('rotating ENCRYPTION_KEY with two instances on one PostgreSQL', () => {
  it('by the steps of docs/many-workspaces.md, with both writing throughout: every secret opens on both at every step, and the old key goes', async () => {
    const url = await freshDatabase(server);
    const { writes, readsAll, restart, withNewKeyOnly } = traffic(url);
    let a = await start(url, 'A', { current: OLD });
    let b = await start(url, 'B', { current: OLD });
    await Promise.all([writes(a), writes(b)]);

    // 1. Every instance in turn gets the new key as ENCRYPTION_KEY_PREVIOUS: it opens both, seals with the old.
    a = await restart(a, { current: OLD, previous: NEW }, b);
    b = await restart(b, { current: OLD, previous: NEW }, a);
    await readsAll(a, b);

    // 2. Every instance in turn swaps them. The first start seals everything again while the
    // other, not yet restarted, still writes with the old key.
    a = await restart(a, { current: NEW, previous: OLD }, b);
    expect(a.report.resealed).toBeGreaterThan(0);
    await Promise.all([writes(a), writes(b)]);
    // Dropping the old key now (what the issue saw pass) is refused, by name and count.
    expect(await withNewKeyOnly()).toMatch(
      new RegExp(`ENCRYPTION_KEY_PREVIOUS \\(not set\\): key ${keyIdOf(OLD)} sealed \\d+ secrets?\\.`),
    );
    // Each opens all the other wrote, whichever key sealed it.
    await readsAll(b, a);
    b = await restart(b, { current: NEW, previous: OLD }, a);

    // 3. Once every instance has swapped, one more start with both keys seals again what the old
    // key sealed meanwhile (here the last request B finished before its old process stopped: its
    // three workspaces' tokens and keys), and says how many. Until then the old key cannot go.
    expect(await withNewKeyOnly()).toContain(`key ${keyIdOf(OLD)} sealed 6 secrets.`);
    a = await restart(a, { current: NEW, previous: OLD });
    expect(a.report).toEqual({ keyId: keyIdOf(NEW), previousKeyId: keyIdOf(OLD), resealed: 6, newer: 0 });
    await readsAll(a, b);

    // 4. The old key goes, from every instance; nothing is left that needs it.
    a = await restart(a, { current: NEW }, b);
    b = await restart(b, { current: NEW }, a);
    await readsAll(a, b);
    expect(await keyIdsIn(a.store)).toEqual(new Set([keyIdOf(NEW)]));
    const old = await refusal(start(url, 'C', { current: OLD }));
    expect(old.message).toContain(`key ${keyIdOf(NEW)} sealed 12 secrets and the store's check value.`);
    for (const spelling of spellings(OLD, NEW)) expect(old.message).not.toContain(spelling);
    await Promise.all([a.store.close(), b.store.close()]);
  });

  it('a start sealing again never overwrites what another instance wrote after it read the row', async () => {
    const url = await freshDatabase(server);
    const a = await start(url, 'A', { current: OLD });
    await a.installations.storeInstallation(install('T0RACE', 'xoxb-race-secret-token'));
    await a.installations.connectPaymentKey(installationId('T0RACE'), 'key-before', 'U1', clock());
    const b = await start(url, 'B', { current: OLD, previous: NEW });
    const gate = await openStore({ kind: 'postgres', url });

    // B replaces the key: its transaction writes the row, then waits to delete the old account's
    // readings, which `gate` holds until released.
    let release = () => {};
    let locked = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const gateHeld = gate.transaction(async (trx) => {
      await sql`lock table balance_history in share mode`.execute(trx);
      locked();
      await held;
    });
    await isLocked;
    const replacing = b.installations.connectPaymentKey(installationId('T0RACE'), 'key-after', 'U1', clock());
    await waitForLockWaits(gate, 1);
    // Meanwhile another instance starts with both keys and seals the row again: it reads the row as
    // it was before B's write, and its own write waits for B's.
    const resealing = start(url, 'C', { current: NEW, previous: OLD });
    await waitForLockWaits(gate, 2);
    release();
    await Promise.all([gateHeld, replacing]);
    const c = await resealing;

    // B's key stands (still sealed with the old key, which every instance holds), and opens.
    expect(await b.installations.paymentKeyOf(installationId('T0RACE'))).toBe('key-after');
    expect(await c.installations.paymentKeyOf(installationId('T0RACE'))).toBe('key-after');
    expect((await c.installations.fetchInstallation(query('T0RACE'))).bot?.token).toBe(
      'xoxb-race-secret-token',
    );
    // C sealed again the token and the check value, and left B's newer key as it was.
    expect(c.report).toMatchObject({ resealed: 2, newer: 1 });
    await Promise.all([a.store.close(), b.store.close(), c.store.close(), gate.close()]);
  });
});

/** Waits until exactly `count` statements on the database wait for a lock. */
async function waitForLockWaits(store: Store, count: number): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    const { rows } = await sql<{ waiting: number }>`
      select count(*)::int as waiting from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(store.db);
    if (rows[0]?.waiting === count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never ${count} statements waiting for a lock`);
}
