import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { commandBody } from '../support/slack-requests.js';
import { askBot, killBot, type Stack, startBot, startStack, until, watchInvoice } from './harness.js';

/**
 * SQLite is for one process: a second one on the same file stops at once, before touching it;
 * a process restarted after kill -9 takes the file, and the work its predecessor had claimed,
 * over at once.
 */

const OPEN = DEMO_INVOICE_IDS.open;
const WATCH_POLL_SECONDS = 1;

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

function sqliteFile() {
  const path = join(mkdtempSync(join(tmpdir(), 'bot-e2e-one-')), 'bot.sqlite');
  return { path, url: `file:${path}`, lock: `${path}.lock` };
}
/** Size and modification time of the database and its write-ahead log. */
const fingerprint = (path: string) =>
  [path, `${path}-wal`].map((p) => {
    const s = statSync(p, { throwIfNoEntry: false });
    return s && { size: s.size, mtime: s.mtimeMs };
  });

describe('two processes on one SQLite file', () => {
  it('the second exits 1 at once, naming the file, the first pid and PostgreSQL, without touching the database; the first keeps serving', async () => {
    const db = sqliteFile();
    stack = await startStack({ env: { DATABASE_URL: db.url } });
    const { bot: first, slack, env } = stack;
    const before = fingerprint(db.path);

    const spawned = performance.now();
    const second = await startBot(env, { expectExit: true });
    expect(await second.exited).toBe(1);
    const ms = performance.now() - spawned;

    const fatal = second.logs().find((l) => l.level === 'fatal');
    expect(fatal?.msg).toMatch(
      new RegExp(
        `^could not start: the SQLite file ${db.path} named by DATABASE_URL is in use by process ${first.child.pid} on .*SQLite is for one process; to run several, use PostgreSQL \\(DATABASE_URL=postgres://…\\)\\.$`,
      ),
    );
    const output = second.output.join('\n');
    expect(output).not.toContain('already exists');
    expect(second.logs().map((l) => l.msg)).not.toContain('store ready');
    expect(fingerprint(db.path)).toEqual(before);
    expect(ms).toBeLessThan(5000); // sooner than one SQLite busy timeout: it waits for nothing
    expect(JSON.parse(readFileSync(db.lock, 'utf8'))).toMatchObject({ pid: first.child.pid });

    const { reply } = await askBot(first, slack, (response_url) =>
      commandBody({ command: '/invoice', text: OPEN, response_url }),
    );
    expect(visibleText(reply)).toContain('Order #1042');

    // A clean stop gives the file up: the next process takes it.
    expect((await first.stop()).code).toBe(0);
    expect(existsSync(db.lock)).toBe(false);
    stack.bot = await startBot(env);
    expect(JSON.parse(readFileSync(db.lock, 'utf8'))).toMatchObject({ pid: stack.bot.child.pid });
  });
});

describe('a restart after kill -9 on SQLite', () => {
  it(`announces a change made while it was down within WATCH_POLL_SECONDS + 5 s, though the dead process held the check's lease`, async () => {
    const db = sqliteFile();
    stack = await startStack({
      env: { DATABASE_URL: db.url, WATCH_POLL_SECONDS: String(WATCH_POLL_SECONDS) },
    });
    const { slack, sandbox, env } = stack;
    await watchInvoice(stack.bot, slack, OPEN);
    const [card] = slack.repliesIn('C0SUPPORT');
    if (!card) throw new Error('no live card');

    // The next check never gets its answer: the bot is killed while it holds the check's lease.
    const asked = sandbox.requests.length;
    sandbox.failNext({ kind: 'hang' });
    await until(() => sandbox.requests.length > asked, 'a check in flight');
    await killBot(stack.bot);
    expect(existsSync(db.lock)).toBe(true); // left behind, by a process that is gone

    sandbox.updateInvoice(OPEN, { payStatus: 'paid' });
    const restarted = performance.now();
    stack.bot = await startBot(env);
    await until(() => slack.repliesIn('C0SUPPORT', card.ts).length > 0, 'the thread reply', 30_000);
    expect(performance.now() - restarted).toBeLessThan((WATCH_POLL_SECONDS + 5) * 1000);
    // Paid is final: the change and the end of the watch, in one reply, once.
    await new Promise((r) => setTimeout(r, 2000));
    expect(slack.repliesIn('C0SUPPORT', card.ts).map((m) => visibleText(m))).toEqual([
      expect.stringContaining(
        '*Payment*: Not paid → Paid\nNo longer watching *Order #1042 — annual support plan*: it no longer awaits payment',
      ),
    ]);
  });
});
