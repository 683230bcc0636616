import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { createStopWatchAction } from '../../src/listeners/actions/stop-watch.js';
import { visibleText } from '../support/block-kit.js';
import { buttonArgs } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { useSandbox } from '../support/use-sandbox.js';

/** Stop in the private list of `/invoice watching`: the list stays private, whatever the click found. */
const env = useSandbox();

beforeEach(async () => {
  await emptyWork(env.store);
});

describe('Stop in the private watch list', () => {
  it('replaces the list, still only for the clicker, when the watch had already ended', async () => {
    const { args, rec } = buttonArgs(randomUUID(), { actionId: 'stop_watch:0' });
    Object.assign(args.body, { container: { type: 'message', is_ephemeral: true, channel_id: 'C0SUPPORT' } });
    expect(await createStopWatchAction(env.deps())(args)).toMatchObject({ outcome: 'not_watched' });
    expect(rec.responses[0]).toMatchObject({ response_type: 'ephemeral', replace_original: true });
    expect(visibleText(rec.responses[0])).toContain('Nothing is watched in <#C0SUPPORT>');
  });
});
