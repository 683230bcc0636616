import { describe, expect, it } from 'vitest';
import { createBalanceCommand } from '../../src/listeners/commands/balance.js';
import { commandListener } from '../../src/pipeline/kinds.js';
import { visibleText } from '../support/block-kit.js';
import { commandArgs } from '../support/bolt.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * Which word `/balance` offers back for a mistyped one: a four-letter word (`help`) only one edit
 * away, a longer one up to two, two neighbours swapped counting as one edit, and the closest word
 * when several are near.
 */
const env = useSandbox();

/** The command `/balance <typed>` answers "Did you mean …?" with, or `undefined` when it names none. */
async function suggestionFor(typed: string): Promise<string | undefined> {
  const deps = env.deps();
  const { args, rec } = commandArgs({ command: '/balance', text: typed });
  await commandListener(deps, '/balance', createBalanceCommand(deps))(args);
  const text = visibleText(rec.acks[0] ?? rec.responses[0]);
  expect(text).toContain(`\`${typed}\` is not a word \`/balance\` knows.`);
  return /Did you mean `([^`]*)`\?/.exec(text)?.[1];
}

describe('/balance naming the word a typo most likely meant', () => {
  it('takes two swapped neighbours as one edit: `hlep` is `help`', async () => {
    expect(await suggestionFor('hlep')).toBe('/balance help');
  });

  it('offers nothing for a word two edits from `help`, too many for a four-letter word', async () => {
    expect(await suggestionFor('hexx')).toBeUndefined();
    expect(await suggestionFor('exlp')).toBeUndefined();
    expect(await suggestionFor('hxep')).toBeUndefined();
    expect(await suggestionFor('hlex')).toBeUndefined();
    expect(await suggestionFor('xxhelp')).toBeUndefined();
  });

  it('allows a longer word two edits, and no more', async () => {
    expect(await suggestionFor('sbuscirbe')).toBe('/balance subscribe');
    expect(await suggestionFor('sbuscirbx')).toBeUndefined();
  });

  it('offers the closest of two near words, and the first listed when they are as near', async () => {
    expect(await suggestionFor('xnsubscribe')).toBe('/balance unsubscribe');
    expect(await suggestionFor('nsubscribe')).toBe('/balance subscribe');
  });
});
