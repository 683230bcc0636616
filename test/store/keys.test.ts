import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  eventKey,
  type InstallationId,
  installationId,
  keyProbeKey,
  keyRejectedKey,
  ONE_WORKSPACE,
  ownEventKeys,
  ownStateKeys,
} from '../../src/store/keys.js';
import type { Tables } from '../../src/store/schema.js';

const ONE = installationId('T0ONE');

describe('an installation’s id', () => {
  it('is a Slack team or enterprise id, or the one workspace’s empty id', () => {
    expect(installationId('T0ONE')).toBe('T0ONE');
    expect(installationId('E0ORG')).toBe('E0ORG');
    expect(installationId('')).toBe(ONE_WORKSPACE);
    expect(ONE_WORKSPACE).toBe('');
  });

  it('refuses what no Slack id looks like: a key pattern’s wildcards, a key’s or a lane’s separators, lower case', () => {
    for (const raw of ['T0_ONE', 'T0%', 'T0ONE:event', 'T0ONE/C0FIN', 't0one', ' T0ONE', 'T0ONE\n'])
      expect(() => installationId(raw), JSON.stringify(raw)).toThrow(
        new TypeError('not a Slack team or enterprise id'),
      );
  });
  it('is refused where an installation is meant when it is a plain string (tsc checks these lines)', () => {
    const plain: string = 'T0ONE';
    // @ts-expect-error a plain string is not an installation's id
    const id: InstallationId = plain;
    // A query of one installation's rows refuses it too; its rows carry the brand.
    const rows = (db: Kysely<Tables>) =>
      // @ts-expect-error a plain string is not an installation's id
      db.selectFrom('watches').select('installation_id').where('installation_id', '=', plain).execute();
    const ids: (db: Kysely<Tables>) => Promise<{ installation_id: InstallationId }[]> = rows;
    expect([id, typeof ids]).toEqual(['T0ONE', 'function']);
  });
});

describe('the keys an installation owns in the shared tables', () => {
  it('names the one workspace’s rejected key as it always has, and each installation’s by its id', () => {
    expect(keyRejectedKey(ONE_WORKSPACE)).toBe('payment_key_rejected');
    expect(keyRejectedKey(ONE)).toBe('payment_key_rejected:T0ONE');
    expect(keyProbeKey(ONE)).toBe('payment_key_probe:T0ONE');
    expect(eventKey(ONE, 'event:Ev1')).toBe('T0ONE:event:Ev1');
  });

  it('finds every key of an installation with its patterns, and none of another whose id ends or starts alike', () => {
    const like = (pattern: string, key: string) =>
      new RegExp(`^${pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/%/g, '.*')}$`).test(key);
    expect(like(ownStateKeys(ONE), keyRejectedKey(ONE))).toBe(true);
    expect(like(ownStateKeys(ONE), keyProbeKey(ONE))).toBe(true);
    expect(like(ownStateKeys(ONE), keyRejectedKey(installationId('XT0ONE')))).toBe(false);
    expect(like(ownEventKeys(ONE), eventKey(ONE, 'event:Ev1'))).toBe(true);
    expect(like(ownEventKeys(ONE), eventKey(installationId('T0ONEX'), 'event:Ev1'))).toBe(false);
  });
});
