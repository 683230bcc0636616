import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstallationSummary } from '../../src/store/installations.js';
import { installationId } from '../../src/store/keys.js';
import { connectedInstallation, keptInstallations } from '../support/kept-installations.js';

/** The installations as the store holds them now; each read of one is recorded in `read`. */
const stored: Record<string, InstallationSummary> = {};
const read: string[] = [];
let kept: Awaited<ReturnType<typeof keptInstallations>>;
beforeAll(async () => {
  kept = await keptInstallations({
    serviceUrl: 'http://127.0.0.1:9',
    installations: {
      summaryOf: async (id) => {
        read.push(id);
        return stored[id];
      },
      paymentKeyOf: async (id) => `key-${id}-${stored[id]?.account?.connectedAt}`,
    },
  });
});
afterAll(() => kept.close());

describe('background work given the installation it read moments ago (a batched read)', () => {
  it('is served without reading the installation again; without it, the installation is read', async () => {
    stored.T0KNOWN = connectedInstallation(installationId('T0KNOWN'));
    expect(await kept.check(installationId('T0KNOWN'), stored.T0KNOWN)).toHaveLength(2);
    expect(read).not.toContain('T0KNOWN');
    expect(await kept.check(installationId('T0KNOWN'))).toHaveLength(2);
    expect(read.filter((id) => id === 'T0KNOWN')).toEqual(['T0KNOWN']);
  });

  it('checks with the account the given summary names: a replaced key builds again within the minute', async () => {
    stored.T0SWAP = connectedInstallation(installationId('T0SWAP'), 1);
    await kept.check(installationId('T0SWAP'), stored.T0SWAP);
    await kept.check(installationId('T0SWAP'), stored.T0SWAP);
    expect(kept.made.filter((key) => key.startsWith('key-T0SWAP'))).toEqual(['key-T0SWAP-1']);
    stored.T0SWAP = connectedInstallation(installationId('T0SWAP'), 2);
    await kept.check(installationId('T0SWAP'), stored.T0SWAP);
    expect(kept.made.filter((key) => key.startsWith('key-T0SWAP'))).toEqual(['key-T0SWAP-1', 'key-T0SWAP-2']);
    expect(read).not.toContain('T0SWAP');
  });
});
