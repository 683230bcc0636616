import { describe, expect, it } from 'vitest';
import { createResponseUrlClient } from '../../src/slack/response-url.js';

const message = { response_type: 'ephemeral' as const, text: 'hello' };

/** A fetch that answers each post with the next response queued. */
function answering(...responses: (() => Response)[]) {
  const posts: string[] = [];
  const doFetch = (async (_url: string, init?: RequestInit) => {
    posts.push(String(init?.body));
    const next = responses.shift();
    if (!next) throw new Error('no more answers');
    return next();
  }) as typeof fetch;
  return { doFetch, posts };
}

describe('response_url client, at the edges', () => {
  it('takes an answer that has no body at all', async () => {
    const { doFetch, posts } = answering(() => new Response(null, { status: 204 }));
    const results: string[] = [];
    await createResponseUrlClient({ fetch: doFetch, onPost: (r) => results.push(r) }).post(
      'https://hooks.slack.test/x',
      message,
    );
    expect(posts).toHaveLength(1);
    expect(results).toEqual(['ok']);
  });

  it('waits its backoff on the real clock when given no sleep of its own', async () => {
    const { doFetch, posts } = answering(
      () => new Response('busy', { status: 500 }),
      () => new Response('ok', { status: 200 }),
    );
    const startedAt = performance.now();
    await createResponseUrlClient({ fetch: doFetch, baseDelayMs: 300, maxDelayMs: 300 }).post(
      'https://hooks.slack.test/x',
      message,
    );
    expect(posts).toHaveLength(2);
    // A lower bound only: a busy machine makes it longer, never shorter.
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(250);
  });
});
