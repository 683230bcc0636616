import type { BotPauses } from './bot-pauses.js';
import { makeDigestsDue, withStoreFile } from './sample-history.js';

/** What the page says when there is no feed whose digest could be posted. */
export const NO_FEED = 'No payments feed is on yet: type /balance subscribe first.';

/**
 * The side panel's digest: a button that has the real digest job post each feed's digest now,
 * and a word that the week it charts is sample history (src/demo/sample-history.ts).
 */
export const DIGEST_PANEL = `<h3>Daily digest</h3><p class="muted">The demo started with a week of <strong>sample</strong> balance history (made up, ending at the balances above), so the digest and the App Home have a week to chart. The button makes each feed’s digest due now; the bot restarts to pick it up and its digest job posts it.</p><button type="button" data-digest-now>Post today’s digest now</button><span class="digest-error"></span>`;

/**
 * "Post today’s digest now": with the bot stopped (it holds its SQLite file while it runs), each
 * active feed's digest is made due now in its store, and the bot started again; its digest job
 * claims the due digests as it starts and posts them. Resolves with what to tell the person when
 * nothing could be posted.
 */
export function digestNow(pauses: BotPauses, storeFile: string, clock: () => number = Date.now) {
  return async (): Promise<string | undefined> => {
    let feeds = 0;
    await pauses.pause(async () => {
      feeds = await withStoreFile(storeFile, (store) => makeDigestsDue(store, clock()));
    });
    return feeds === 0 ? NO_FEED : undefined;
  };
}
