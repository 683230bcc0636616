import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KyselyPlugin, RootOperationNode } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { createInstallations } from '../../src/store/installations.js';
import { type InstallationId, installationId } from '../../src/store/keys.js';
import { prepareSealing, SealingKeyError } from '../../src/store/rotation.js';
import { contextOf } from '../../src/store/sealed-columns.js';
import { createSealer, keyIdOf, type Sealer, SealingError, sealedKeyId } from '../../src/store/sealing.js';
import { install, NOW } from '../support/installations-contract.js';
import { writeAsOtherInstance } from '../support/other-instance.js';

const dir = mkdtempSync(join(tmpdir(), 'bot-rotation-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
let path = '';
const fresh = () => {
  n += 1;
  path = join(dir, String(n), 'bot.sqlite');
  return openStore({ kind: 'sqlite', path });
};
/** Another instance's write, on a connection of its own to the last store's file. */
const otherInstance = (statement: string, ...values: string[]) =>
  writeAsOtherInstance(path, statement, ...values);
const query = (teamId: string) => ({ teamId, enterpriseId: undefined, isEnterpriseInstall: false });
const canaryOf = async (store: Store) =>
  (
    await store.db
      .selectFrom('service_state')
      .select('value')
      .where('key', '=', 'sealing_canary')
      .executeTakeFirstOrThrow()
  ).value;

/** The error a start that had to be refused was refused with. */
const refused = (start: Promise<unknown>): Promise<Error> =>
  start.then(
    () => expect.fail('the start was not refused'),
    (e: unknown) => e as Error,
  );

/** The store, and how many pages of installations (reads with a limit) went through it. */
function countingPages(store: Store): { store: Store; pages: () => number } {
  let pages = 0;
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      if (args.node.kind === 'SelectQueryNode' && args.node.limit) pages += 1;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { store: { ...store, db: store.db.withPlugin(plugin) }, pages: () => pages };
}

/**
 * The store, with `work` (another instance's write) done once right after the first read `when`
 * picks: between what a start reads and what it writes.
 */
function meanwhile(
  store: Store,
  when: (node: RootOperationNode) => boolean,
  work: () => Promise<unknown>,
): Store {
  const picked = new Set<unknown>();
  let done = false;
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      if (!done && when(args.node)) picked.add(args.queryId);
      return args.node;
    },
    async transformResult(args) {
      if (!done && picked.has(args.queryId)) {
        done = true;
        await work();
      }
      return args.result;
    },
  };
  return { ...store, db: store.db.withPlugin(plugin) };
}
const isSelect = (node: RootOperationNode) => node.kind === 'SelectQueryNode';

/** `count` installations, their bot tokens sealed by `sealer`, written at once. */
async function manyInstalled(store: Store, sealer: Sealer, count: number): Promise<InstallationId[]> {
  const ids = Array.from({ length: count }, (_, i) => installationId(`T${String(i).padStart(4, '0')}`));
  await store.db
    .insertInto('installations')
    .values(
      ids.map((id) => ({
        id,
        team_id: id,
        enterprise_id: null,
        is_enterprise_install: 0,
        app_id: 'A0APP',
        bot_token: sealer.seal(`xoxb-${id}`, contextOf(id, 'bot_token')),
        bot_refresh_token: null,
        bot_token_expires_at: null,
        bot_id: 'B0BOT',
        bot_user_id: 'U0BOT',
        bot_scopes: 'commands',
        installer_user_id: 'U0INSTALLER',
        payment_api_key: null,
        payment_key_connected_by: null,
        payment_key_connected_at: null,
        created_at: NOW,
        updated_at: NOW,
      })),
    )
    .execute();
  return ids;
}

describe('the store’s check value', () => {
  it('is sealed again with ENCRYPTION_KEY when only ENCRYPTION_KEY_PREVIOUS opens it, and counted', async () => {
    const store = await fresh();
    const [old, next] = [randomBytes(32), randomBytes(32)];
    await prepareSealing(store, createSealer({ current: old }), NOW);
    expect(await prepareSealing(store, createSealer({ current: next, previous: old }), NOW)).toEqual({
      keyId: keyIdOf(next),
      previousKeyId: keyIdOf(old),
      resealed: 1,
      newer: 0,
    });
    expect(sealedKeyId(await canaryOf(store))).toBe(keyIdOf(next));
    expect(await prepareSealing(store, createSealer({ current: next }), NOW)).toMatchObject({ resealed: 0 });
    await store.close();
  });

  it('refuses a start, by name and changing nothing, when it names the key given yet was altered', async () => {
    const store = await fresh();
    const key = randomBytes(32);
    await prepareSealing(store, createSealer({ current: key }), NOW);
    const value = await canaryOf(store);
    const altered = `${value.slice(0, -2)}${value.endsWith('AA') ? 'BB' : 'AA'}`;
    await store.db
      .updateTable('service_state')
      .set({ value: altered })
      .where('key', '=', 'sealing_canary')
      .execute();
    const error = await refused(prepareSealing(store, createSealer({ current: key }), NOW));
    expect(error).toBeInstanceOf(SealingKeyError);
    expect(error.message).toBe(
      `ENCRYPTION_KEY (key ${keyIdOf(key)}) does not open the secrets in the store: the store's check value (service_state sealing_canary) was sealed with no other key, yet does not open: it was altered. Nothing was changed.`,
    );
    expect(error.cause).toBeInstanceOf(SealingError);
    expect(await canaryOf(store)).toBe(altered);
    await store.close();
  });

  it('lets an error that is not about sealing through as it is', async () => {
    const store = await fresh();
    const key = randomBytes(32);
    await prepareSealing(store, createSealer({ current: key }), NOW);
    const broken: Sealer = {
      ...createSealer({ current: key }),
      open() {
        throw new TypeError('the sealer broke');
      },
    };
    await expect(prepareSealing(store, broken, NOW)).rejects.toThrow(new TypeError('the sealer broke'));
    await store.close();
  });
});

describe('a value another instance wrote meanwhile', () => {
  it('keeps the check value another instance sealed between this start’s read and its write', async () => {
    const store = await fresh();
    const [old, next] = [randomBytes(32), randomBytes(32)];
    await prepareSealing(store, createSealer({ current: old }), NOW);
    const theirs = createSealer({ current: next }).seal('sealing_canary', 'service_state:sealing_canary');
    const racing = meanwhile(store, isSelect, () =>
      otherInstance(`update service_state set value = ? where key = 'sealing_canary'`, theirs),
    );
    expect(await prepareSealing(racing, createSealer({ current: next, previous: old }), NOW)).toMatchObject({
      resealed: 0,
      newer: 1,
    });
    expect(await canaryOf(store)).toBe(theirs);
    await store.close();
  });

  it('keeps a secret another instance sealed again between this start’s read and its write', async () => {
    const store = await fresh();
    const [old, next] = [randomBytes(32), randomBytes(32)];
    await prepareSealing(store, createSealer({ current: old }), NOW);
    await manyInstalled(store, createSealer({ current: old }), 2);
    const theirs = createSealer({ current: next }).seal(
      'xoxb-T0000',
      contextOf(installationId('T0000'), 'bot_token'),
    );
    const racing = meanwhile(
      store,
      (node) => node.kind === 'SelectQueryNode' && node.limit !== undefined,
      () => otherInstance(`update installations set bot_token = ? where id = 'T0000'`, theirs),
    );
    expect(await prepareSealing(racing, createSealer({ current: next, previous: old }), NOW)).toMatchObject({
      resealed: 2, // the check value and T0001's token
      newer: 1,
    });
    const row = await store.db
      .selectFrom('installations')
      .select('bot_token')
      .where('id', '=', installationId('T0000'))
      .executeTakeFirstOrThrow();
    expect(row.bot_token).toBe(theirs);
    await store.close();
  });
});

describe('a secret sealed again as it is read', () => {
  it('keeps a payment key another instance connected between the read and the write', async () => {
    const store = await fresh();
    const [old, next] = [randomBytes(32), randomBytes(32)];
    const [id] = await manyInstalled(store, createSealer({ current: old }), 1);
    if (!id) throw new Error('one installation');
    await createInstallations(store, createSealer({ current: old }), () => NOW).connectPaymentKey(
      id,
      'key-old',
      'U1',
      NOW,
    );
    const theirs = createSealer({ current: next }).seal('key-new', contextOf(id, 'payment_api_key'));
    const racing = meanwhile(store, isSelect, () =>
      otherInstance(`update installations set payment_api_key = ? where id = '${id}'`, theirs),
    );
    const during = createInstallations(racing, createSealer({ current: next, previous: old }), () => NOW);
    expect(await during.paymentKeyOf(id)).toBe('key-old');
    const row = await store.db
      .selectFrom('installations')
      .select('payment_api_key')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.payment_api_key).toBe(theirs);
    await store.close();
  });
});

describe('a refused start', () => {
  it('counts one secret as one, and several as several, for each key it was not given', async () => {
    const store = await fresh();
    const [one, two, mine] = [randomBytes(32), randomBytes(32), randomBytes(32)];
    await createInstallations(store, createSealer({ current: one }), () => NOW).storeInstallation(
      install('T0ONE', 'xoxb-one'),
    );
    const byTwo = createInstallations(store, createSealer({ current: two }), () => NOW);
    await byTwo.storeInstallation(install('T0TWO', 'xoxb-two'));
    await byTwo.connectPaymentKey(installationId('T0TWO'), 'pk-two', 'U0ADMIN', NOW);
    const error = await refused(prepareSealing(store, createSealer({ current: mine }), NOW));
    expect(error).toBeInstanceOf(SealingKeyError);
    expect(error.message).toContain(
      `ENCRYPTION_KEY (key ${keyIdOf(mine)}) does not open the secrets in the store, nor does ENCRYPTION_KEY_PREVIOUS (not set): `,
    );
    expect(error.message).toMatch(new RegExp(`key ${keyIdOf(one)} sealed 1 secret[;.]`));
    expect(error.message).toContain(`key ${keyIdOf(two)} sealed 2 secrets`);
    expect(error.message).toMatch(/Nothing was changed\.$/);
    expect(await store.db.selectFrom('service_state').selectAll().execute()).toEqual([]);
    await store.close();
  });
});

describe('sealing again at start, page by page', () => {
  it('reads each page of installations once, and seals each secret of the previous key once', async () => {
    const opened = await fresh();
    const [old, next] = [randomBytes(32), randomBytes(32)];
    await prepareSealing(opened, createSealer({ current: old }), NOW);
    const ids = await manyInstalled(opened, createSealer({ current: old }), 401);
    const { store, pages } = countingPages(opened);
    expect(await prepareSealing(store, createSealer({ current: next, previous: old }), NOW)).toMatchObject({
      resealed: 402,
      newer: 0,
    });
    expect(pages()).toBe(3); // 200, 200, then the last one
    const after = createInstallations(opened, createSealer({ current: next }), () => NOW);
    for (const id of [ids[0], ids[200], ids[400]] as string[])
      expect((await after.fetchInstallation(query(id))).bot?.token).toBe(`xoxb-${id}`);
    await opened.close();
  });

  it('reads no installation again when nothing was sealed with the previous key', async () => {
    const opened = await fresh();
    const [old, next] = [randomBytes(32), randomBytes(32)];
    await prepareSealing(opened, createSealer({ current: next }), NOW);
    await manyInstalled(opened, createSealer({ current: next }), 3);
    const { store, pages } = countingPages(opened);
    expect(await prepareSealing(store, createSealer({ current: next, previous: old }), NOW)).toMatchObject({
      resealed: 0,
      newer: 0,
    });
    expect(pages()).toBe(0);
    await opened.close();
  });

  it('seals again only what the previous key sealed, leaving the current key’s values as they are', async () => {
    const store = await fresh();
    const [old, next] = [randomBytes(32), randomBytes(32)];
    await prepareSealing(store, createSealer({ current: next }), NOW);
    await manyInstalled(store, createSealer({ current: next }), 2);
    const before = await store.db
      .selectFrom('installations')
      .select(['id', 'bot_token'])
      .orderBy('id')
      .execute();
    await createInstallations(store, createSealer({ current: old }), () => NOW).connectPaymentKey(
      installationId('T0001'),
      'pk-one',
      'U0ADMIN',
      NOW,
    );
    expect(await prepareSealing(store, createSealer({ current: next, previous: old }), NOW)).toMatchObject({
      resealed: 1,
      newer: 0,
    });
    expect(
      await store.db.selectFrom('installations').select(['id', 'bot_token']).orderBy('id').execute(),
    ).toEqual(before);
    expect(
      await createInstallations(store, createSealer({ current: next }), () => NOW).paymentKeyOf(
        installationId('T0001'),
      ),
    ).toBe('pk-one');
    await store.close();
  });
});
