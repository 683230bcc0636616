import { beforeEach, describe, expect, it } from 'vitest';
import { publishHome } from '../../src/listeners/home.js';
import { visibleText } from '../support/block-kit.js';
import { captureLogs, type DepsOptions } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * The App Home reads the balance for at most 2 s, and says why it shows none; an operator reads
 * why Slack's directory could not say who opened it.
 */
const env = useSandbox();

beforeEach(async () => {
  await emptyWork(env.store);
});

/** `user` opens their Home tab: what it shows, the request's outcome, the log, how long it took. */
async function home(user: string, opts: DepsOptions = {}) {
  const logs = captureLogs();
  const views: unknown[] = [];
  const started = Date.now();
  const tracked = await publishHome(
    env.deps({ ...opts, logger: logs.logger }),
    {
      views: { publish: async (args) => void views.push(args.view) },
    },
    user,
  );
  expect(views).toHaveLength(1);
  return {
    text: visibleText(views[0]),
    outcome: tracked.outcome,
    lines: logs.lines,
    ms: Date.now() - started,
  };
}

describe('the App Home reading the balance', () => {
  it('shows a member the balance, with nothing for an operator to see', async () => {
    const { text, outcome, lines } = await home('U0MEMBER');
    expect(text).toContain('0.0123456 BTC');
    expect(outcome).toBe('ok');
    expect(lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
  });

  it('gives up on a balance that takes longer than 2 s, and says it could not read it', async () => {
    env.sandbox.failNext({ kind: 'slow', ms: 3500 });
    const { text, outcome, ms } = await home('U0MEMBER', { paymentTimeoutMs: 5000 });
    expect(ms).toBeLessThan(3000);
    expect(text).not.toContain('BTC');
    expect(outcome).toBe('service_unavailable');
    expect(text).toContain(':warning: The balance could not be read just now:');
  });
});

describe('the App Home when Slack will not say who opened it', () => {
  it('warns with the directory’s error', async () => {
    const { lines } = await home('U0MEMBER', { directoryFails: true });
    expect(lines.find((l) => l.level === 'warn')).toMatchObject({
      msg: 'could not look the person up with users.info: their App Home shows no balance and no feeds',
      err: { message: 'An API error occurred: missing_scope' },
    });
  });
});
