import { describe, expect, inject, it } from 'vitest';
import { openStore } from '../../src/store/database.js';
import { pruneEnded } from '../../src/store/retention.js';
import { endingRows, idsIn } from '../support/ending-rows.js';
import { NOW } from '../support/factories.js';
import { freshDatabase } from '../support/postgres-server.js';

/** Two instances deleting what ended long ago at the same moment, on one PostgreSQL. */
const url = await freshDatabase(inject('postgresUrl'));
const one = await openStore({ kind: 'postgres', url });
const two = await openStore({ kind: 'postgres', url });
const now = NOW.getTime();

describe('ended rows deleted by two instances at once, on PostgreSQL', () => {
  it.each(['watches', 'feed_subscriptions'] as const)(
    '%s: each row once, neither waits on the other, the rest kept',
    async (table) => {
      const rows: Record<string, 'active' | number> = { keep: 'active', recent: 3 };
      for (let i = 0; i < 2500; i += 1) rows[`old-${String(i).padStart(4, '0')}`] = 40;
      await endingRows(one, table, now, rows);

      const deleted = await Promise.all([pruneEnded(one, table, 30)(now), pruneEnded(two, table, 30)(now)]);
      expect(deleted[0] + deleted[1]).toBe(2500);
      expect(await idsIn(one, table)).toEqual(['keep', 'recent']);
    },
  );
});
