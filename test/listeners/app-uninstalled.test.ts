import { describe, expect, it } from 'vitest';
import { appUninstalled } from '../../src/listeners/workspaces/app-uninstalled.js';
import { captureLogs } from '../support/bolt.js';

const event = {
  body: { event_time: 1_800_000_000 },
  context: { teamId: 'T0GONE', isEnterpriseInstall: false },
};

describe('app_uninstalled', () => {
  it('deletes the installation even when the store fails at first: Slack sends the event once', async () => {
    const logs = captureLogs();
    const tries: number[] = [];
    const waits: number[] = [];
    const forgotten: string[] = [];
    const handle = appUninstalled({
      installations: {
        async uninstall(id, at) {
          tries.push(at);
          if (tries.length < 3) throw new Error('the store is not answering');
          return id === 'T0GONE';
        },
      },
      logger: logs.logger,
      forget: (id) => forgotten.push(id),
      wait: async (ms) => waits.push(ms),
    });
    await handle(event);
    expect(tries).toEqual([1_800_000_000_000, 1_800_000_000_000, 1_800_000_000_000]);
    expect(waits).toEqual([500, 2000]);
    expect(forgotten).toEqual(['T0GONE']);
    expect(logs.lines.at(-1)).toMatchObject({ level: 'info', installation: 'T0GONE', deleted: true });
  });

  it('says so, naming the installation, when the store never answers', async () => {
    const logs = captureLogs();
    const handle = appUninstalled({
      installations: {
        uninstall: async () => {
          throw new Error('the store is not answering');
        },
      },
      logger: logs.logger,
      forget: () => undefined,
      wait: async () => undefined,
    });
    await handle(event);
    expect(logs.lines.filter((l) => l.level === 'warn')).toHaveLength(3);
    expect(logs.lines.at(-1)).toMatchObject({
      level: 'error',
      installation: 'T0GONE',
      msg: 'could not delete an uninstalled installation: its tokens and key stay until it is uninstalled again',
    });
  });
});
