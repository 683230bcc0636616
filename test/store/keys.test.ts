import { describe, expect, it } from 'vitest';
import {
  eventKey,
  installationId,
  keyProbeKey,
  keyRejectedKey,
  ownEventKeys,
  ownStateKeys,
} from '../../src/store/keys.js';

describe('the keys an installation owns in the shared tables', () => {
  it('names the one workspace’s rejected key as it always has, and each installation’s by its id', () => {
    expect(keyRejectedKey(installationId(''))).toBe('payment_key_rejected');
    expect(keyRejectedKey(installationId('T0ONE'))).toBe('payment_key_rejected:T0ONE');
    expect(keyProbeKey(installationId('T0ONE'))).toBe('payment_key_probe:T0ONE');
    expect(eventKey(installationId('T0ONE'), 'event:Ev1')).toBe('T0ONE:event:Ev1');
  });

  it('finds every key of an installation with its patterns, and none of another whose id ends or starts alike', () => {
    const like = (pattern: string, key: string) =>
      new RegExp(`^${pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/%/g, '.*')}$`).test(key);
    expect(like(ownStateKeys(installationId('T0ONE')), keyRejectedKey(installationId('T0ONE')))).toBe(true);
    expect(like(ownStateKeys(installationId('T0ONE')), keyProbeKey(installationId('T0ONE')))).toBe(true);
    expect(like(ownStateKeys(installationId('T0ONE')), keyRejectedKey(installationId('XT0ONE')))).toBe(false);
    expect(like(ownEventKeys(installationId('T0ONE')), eventKey(installationId('T0ONE'), 'event:Ev1'))).toBe(
      true,
    );
    expect(like(ownEventKeys(installationId('T0ONE')), eventKey(installationId('T0ONEX'), 'event:Ev1'))).toBe(
      false,
    );
  });
});
