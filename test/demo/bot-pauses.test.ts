import { describe, expect, it } from 'vitest';
import { BotPauses } from '../../src/demo/bot-pauses.js';

/** Work in the bot's store between two runs of the bot: the bot is stopped for it, and it is settled once the bot is back. */

describe('pausing the demo’s bot for work in its store', () => {
  it('stops the bot, does the work only once the runner has it stopped, and settles once the bot is back', async () => {
    const steps: string[] = [];
    const pauses = new BotPauses(async () => void steps.push('stop'));
    let settled = false;
    const back = pauses
      .pause(async () => void steps.push('work'))
      .then(() => {
        settled = true;
      });
    expect(steps).toEqual(['stop']);
    expect(pauses.asked).toBe(true);

    await pauses.runBetween();
    expect(steps).toEqual(['stop', 'work']);
    expect(pauses.asked).toBe(false);
    await Promise.resolve();
    expect(settled).toBe(false); // the bot is not back yet

    pauses.resumed();
    await back;
    expect(settled).toBe(true);
  });

  it('a work that fails rejects with its error once the bot is back; the demo stopping rejects what was not done', async () => {
    const pauses = new BotPauses(async () => undefined);
    const failed = pauses.pause(async () => {
      throw new Error('the store refused');
    });
    await pauses.runBetween();
    pauses.resumed();
    await expect(failed).rejects.toThrow('the store refused');

    const left = pauses.pause(async () => undefined);
    pauses.abandon(new Error('the demo stopped'));
    await expect(left).rejects.toThrow('the demo stopped');
  });
});
