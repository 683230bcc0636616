import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DIGEST,
  formatDigestTime,
  inZone,
  namesZone,
  nextDigestAt,
  parseDigestTime,
} from '../../src/feed/schedule.js';

describe('parseDigestTime', () => {
  it.each([
    ['', DEFAULT_DIGEST],
    ['08:30', { hour: 8, minute: 30, zone: 'UTC' }],
    ['8:05 Europe/Berlin', { hour: 8, minute: 5, zone: 'Europe/Berlin' }],
    ['23:59 america/new_york', { hour: 23, minute: 59, zone: 'America/New_York' }],
    ['00:00 UTC', { hour: 0, minute: 0, zone: 'UTC' }],
    ['00:00 utc', { hour: 0, minute: 0, zone: 'UTC' }],
    // The name given, never an older name of the same zone (Node 20's ICU says Europe/Kiev, Asia/Calcutta).
    ['07:15 Europe/Kyiv', { hour: 7, minute: 15, zone: 'Europe/Kyiv' }],
    ['07:15 Asia/Kolkata', { hour: 7, minute: 15, zone: 'Asia/Kolkata' }],
    ['07:15 America/Nuuk', { hour: 7, minute: 15, zone: 'America/Nuuk' }],
    ['07:15 US/Pacific', { hour: 7, minute: 15, zone: 'US/Pacific' }],
    ['07:15 europe/kyiv', { hour: 7, minute: 15, zone: 'europe/kyiv' }],
  ])('reads %j', (text, time) => {
    expect(parseDigestTime(text)).toEqual(time);
  });

  it.each([
    '24:00',
    '9',
    '09:60',
    '9am',
    '09:00 Mars/Olympus',
    '09:00 Europe/Berlin extra',
    '<!channel>',
    '08:301',
    'x08:30',
  ])('refuses %j', (text) => {
    expect(parseDigestTime(text)).toBeUndefined();
  });

  it('writes a time back as people read it', () => {
    expect(formatDigestTime({ hour: 8, minute: 5, zone: 'Europe/Berlin' })).toBe('08:05 Europe/Berlin');
  });
});

describe('nextDigestAt', () => {
  const at = (iso: string) => Date.parse(iso);
  const iso = (ms: number) => new Date(ms).toISOString();

  it('is today when the time is still ahead, tomorrow once it has passed', () => {
    const nine = { hour: 9, minute: 0, zone: 'UTC' };
    expect(iso(nextDigestAt(nine, at('2026-11-21T08:59:59Z')))).toBe('2026-11-21T09:00:00.000Z');
    expect(iso(nextDigestAt(nine, at('2026-11-21T09:00:00Z')))).toBe('2026-11-22T09:00:00.000Z');
  });

  it('keeps 09:00 on the wall across daylight saving, both ways (Europe/Berlin)', () => {
    const berlin = { hour: 9, minute: 0, zone: 'Europe/Berlin' };
    expect(iso(nextDigestAt(berlin, at('2026-03-28T09:00:00Z')))).toBe('2026-03-29T07:00:00.000Z'); // CEST from that night
    expect(iso(nextDigestAt(berlin, at('2026-03-27T09:00:00Z')))).toBe('2026-03-28T08:00:00.000Z');
    expect(iso(nextDigestAt(berlin, at('2026-10-24T08:00:00Z')))).toBe('2026-10-25T08:00:00.000Z'); // back to CET
  });

  it('keeps the clock of a zone kept under the name given (Europe/Kyiv: UTC+2 in winter, +3 in summer)', () => {
    const kyiv = { hour: 9, minute: 0, zone: 'Europe/Kyiv' };
    expect(iso(nextDigestAt(kyiv, at('2026-11-21T00:00:00Z')))).toBe('2026-11-21T07:00:00.000Z');
    expect(iso(nextDigestAt(kyiv, at('2026-06-21T00:00:00Z')))).toBe('2026-06-21T06:00:00.000Z');
  });

  it('moves a time that does not exist that day (02:30 on the spring-forward night) to one that does', () => {
    const night = { hour: 2, minute: 30, zone: 'America/New_York' };
    const next = nextDigestAt(night, at('2026-03-08T05:00:00Z'));
    expect(iso(next)).toBe('2026-03-08T07:30:00.000Z'); // 03:30 EDT
  });
});

describe('a digest time typed without its zone', () => {
  const time = { hour: 7, minute: 15, zone: 'UTC' };

  it.each([
    ['', false],
    ['07:15', false],
    [' 07:15  ', false],
    ['07:15 Europe/Kyiv', true],
  ])('%j names its zone: %s', (text, named) => {
    expect(namesZone(text)).toBe(named);
  });

  it('takes the subscriber’s own zone from Slack, as the time zone database spells it', () => {
    expect(inZone(time, 'Europe/Kyiv')).toEqual({ hour: 7, minute: 15, zone: 'Europe/Kyiv' });
    expect(inZone(time, 'america/new_york')).toEqual({ hour: 7, minute: 15, zone: 'America/New_York' });
  });

  it('stays in UTC when Slack names no zone, or one luxon does not know', () => {
    expect(inZone(time, undefined)).toEqual(time);
    expect(inZone(time, 'Mars/Olympus')).toEqual(time);
    expect(inZone(time, '')).toEqual(time);
  });
});
