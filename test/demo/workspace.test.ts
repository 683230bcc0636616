import { afterEach, describe, expect, it, vi } from 'vitest';
import { asPayloadMessage, isObject, str, Workspace } from '../../src/demo/workspace.js';

/** The demo workspace itself: its messages, their timestamps, and who hears of changes. */

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the helpers the Web API reads arguments with', () => {
  it('isObject: a JSON object, not null, an array or a scalar', () => {
    expect(isObject({})).toBe(true);
    expect(isObject({ a: 1 })).toBe(true);
    expect([null, [], [1], 'x', 1, undefined, true].map(isObject)).toEqual(Array(7).fill(false));
  });

  it('str: a string as is, anything else undefined', () => {
    expect(str('x')).toBe('x');
    expect(str('')).toBe('');
    expect([1, null, undefined, ['x'], { x: 1 }].map(str)).toEqual(Array(5).fill(undefined));
  });
});

describe('a message as Slack shows it in a payload', () => {
  it('a bot’s carries its bot_id; yours only your user', () => {
    const workspace = new Workspace();
    const bot = workspace.add({ user: 'U0BOT', text: 'b', blocks: [{ type: 'divider' }] });
    const yours = workspace.add({ user: 'U0YOU', text: 'y', threadTs: bot.ts });
    expect(asPayloadMessage(bot)).toEqual({
      type: 'message',
      bot_id: 'B0BOT',
      user: 'U0BOT',
      text: 'b',
      blocks: [{ type: 'divider' }],
      ts: bot.ts,
    });
    expect(asPayloadMessage(yours)).toEqual({
      type: 'message',
      user: 'U0YOU',
      text: 'y',
      blocks: [],
      ts: yours.ts,
      thread_ts: bot.ts,
    });
  });
});

describe('Workspace', () => {
  it('adds a plain message by default: in the channel, not a command, not edited, nothing attached', () => {
    const workspace = new Workspace();
    const added = workspace.add({ user: 'U0YOU', text: 'hi' });
    expect(added).toEqual({
      ts: expect.any(String),
      threadTs: undefined,
      user: 'U0YOU',
      text: 'hi',
      blocks: [],
      ephemeral: false,
      command: false,
      edited: false,
      metadata: undefined,
      unfurls: [],
    });
    expect(workspace.messages).toEqual([added]);
    expect(workspace.find(added.ts)).toBe(added);
    expect(workspace.find('1.000001')).toBeUndefined();
  });

  it('gives Slack-style timestamps from the clock, unique and increasing within one millisecond', () => {
    vi.spyOn(Date, 'now').mockReturnValue(1_700_000_000_123);
    const workspace = new Workspace();
    const stamps = Array.from({ length: 3 }, (_, i) => workspace.add({ user: 'U0YOU', text: `${i}` }).ts);
    expect(stamps).toEqual(['1700000000.123000', '1700000000.123001', '1700000000.123002']);
  });

  it('tells each listener of every change until it stops listening', () => {
    const workspace = new Workspace();
    const heard: string[] = [];
    const stopA = workspace.onChange(() => heard.push('a'));
    workspace.onChange(() => heard.push('b'));
    workspace.add({ user: 'U0YOU', text: 'x' });
    expect(heard).toEqual(['a', 'b']);
    stopA();
    workspace.changed();
    expect(heard).toEqual(['a', 'b', 'b']);
  });

  it('posts a notice from Slackbot, only to you', () => {
    const workspace = new Workspace();
    const parent = workspace.add({ user: 'U0BOT', text: 'p' });
    expect(workspace.notice('careful', parent.ts)).toMatchObject({
      user: 'USLACKBOT',
      text: 'careful',
      ephemeral: true,
      threadTs: parent.ts,
    });
  });
});
