import { describe, expect, it } from 'vitest';
import { Inflight } from '../../src/inflight.js';
import type { EventArgs } from '../../src/listeners/args.js';
import { notConnectedHandlers } from '../../src/listeners/index.js';
import { captureLogs, recordingResponseUrls } from '../support/bolt.js';

/**
 * The log of a workspace without a payment account opening its App Home: the Home tab's line
 * says the answer went as a view; another tab's is debug only.
 */
describe('the App Home of a workspace whose payment account is not connected, in the log', () => {
  it('logs the Home tab as answered with a view, and another tab at debug level', async () => {
    const logs = captureLogs();
    const deps = {
      logger: logs.logger,
      inflight: new Inflight(),
      fastPathMs: 1500,
      responseUrls: recordingResponseUrls,
    };
    const opened = notConnectedHandlers(deps, 'U0INSTALLER', async () => undefined).event.app_home_opened;
    for (const tab of ['about', 'home'])
      await opened({
        event: { user: 'U0MEMBER', tab, channel: 'D0' },
        body: { team_id: 'T0' },
      } as unknown as EventArgs<'app_home_opened'>);
    const lines = logs.lines.filter((l) => l.msg === 'event app_home_opened');
    expect(lines).toMatchObject([
      { level: 'debug', outcome: 'ok' },
      { level: 'info', outcome: 'not_connected', delivery: 'view' },
    ]);
  });
});
