import { afterEach, describe, expect, it } from 'vitest';
import { type DemoRun, startDemo, stopDemos, until } from '../support/demo-run.js';

/**
 * The demo draws and submits the feed's Settings modal: with the real bot (src/main.ts) on the
 * demo, a click on the feed's Settings button opens the modal on the page, a wrong minimum is
 * answered under its input with what was typed kept, and Save closes it and the channel is told.
 */

afterEach(stopDemos, 30_000);

const pageUrl = (run: DemoRun) => /Open (\S+) in your browser/.exec(run.logs.join('\n'))?.[1] ?? '';
const state = async (url: string) =>
  (await (await fetch(`${url}demo/state`)).json()) as { feed: string; modal: string | null };
const post = (url: string, path: string, body: unknown) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** What the page's script sends on Save: every input, `minimums` typed in the minimums box. */
const saved = (minimums: string) => ({
  values: {
    feed_coins: { type: 'multi_static_select', values: [] },
    feed_minimums: { type: 'plain_text_input', value: minimums },
    feed_style: { type: 'radio_buttons', value: 'full' },
    feed_digest: { type: 'static_select', value: 'daily' },
    feed_weekday: { type: 'static_select', value: '1' },
    feed_digest_time: { type: 'timepicker', value: '09:00' },
    feed_zone: { type: 'plain_text_input', value: 'UTC' },
  },
});

describe('the Settings modal in the demo', () => {
  it('opens from the feed’s button, shows an error under its input, and saves', async () => {
    const run = await startDemo({ bot: 'real', reason: 'unconfigured' });
    await until(() => run.logs.some((line) => line.startsWith('The bot is ready')), 60_000);
    const url = pageUrl(run);
    expect((await post(url, 'demo/say', { text: '/balance subscribe' })).status).toBe(204);
    const button =
      /data-place="message" data-ts="([\d.]+)">(?:(?!data-place=).)*data-action-id="feed_settings"/s;
    await expect
      .poll(async () => button.test((await state(url)).feed), { timeout: 30_000, interval: 200 })
      .toBe(true);
    const ts = button.exec((await state(url)).feed)?.[1];
    const click = { place: 'message', ts, blockId: 'feed_settings', actionId: 'feed_settings' };
    expect((await post(url, 'demo/click', click)).status).toBe(204);
    await expect
      .poll(async () => (await state(url)).modal, { timeout: 30_000, interval: 200 })
      .toContain('Feed settings');
    const modal = (await state(url)).modal ?? '';
    for (const drawn of [
      'type="time" value="09:00"',
      '<select class="bk-field-input" multiple',
      'type="radio"',
      '<textarea',
      'Every day',
    ])
      expect(modal).toContain(drawn);

    expect((await post(url, 'demo/submit', saved('BTC 0,5'))).status).toBe(204);
    const refused = (await state(url)).modal ?? '';
    expect(refused).toContain('Line 1: 0,5 is not an exact amount, such as 0.001.');
    expect(refused).toContain('>BTC 0,5</textarea>');

    expect((await post(url, 'demo/submit', saved('BTC 0.5'))).status).toBe(204);
    expect((await state(url)).modal).toBeNull();
    await expect
      .poll(async () => (await state(url)).feed, { timeout: 30_000, interval: 200 })
      .toContain('set the minimum for BTC to 0.5.');
    expect(run.errors.filter((line) => /^bot (error|fatal)/.test(line))).toEqual([]);
  }, 120_000);
});
