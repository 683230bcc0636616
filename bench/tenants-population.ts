/**
 * The world of the tenants scenario (bench/tenants.ts) before its instances start: the
 * installations, each with its own payment key, bot token and watches, stored as the bot stores
 * them; the live cards the Slack stand-in holds for them; the environment each instance runs with.
 */
import { randomBytes } from 'node:crypto';
import type { Installation } from '@slack/bolt';
import { parse as parseJson, stringify } from 'lossless-json';
import { invoiceSchema } from '../src/payments/schemas.js';
import { demoInvoices } from '../src/sandbox/data.js';
import type { Store } from '../src/store/database.js';
import { createInstallations } from '../src/store/installations.js';
import { type InstallationId, installationId } from '../src/store/keys.js';
import { prepareSealing } from '../src/store/rotation.js';
import type { createSealer } from '../src/store/sealing.js';
import { toSnapshot } from '../src/watches/snapshot.js';
import type { SlackStandIn } from '../test/support/slack-stand-in.js';

/** The big installation: its checks are counted apart from the small ones'. */
export const BIG = installationId('TBIG00000');
const teamId = (i: number) => installationId(`T${String(i).padStart(8, '0')}`);
/** Invoice ids: the installation's number in the first group, the watch's in the last. */
const invoiceIdOf = (i: number, k: number) =>
  `${i.toString(16).padStart(8, '0')}-0000-4000-8000-${String(k).padStart(12, '0')}`;

export interface Tenant {
  id: InstallationId;
  apiKey: string;
  botToken: string;
  /** Its watches: the invoice, and the card (its ts is the thread's) in `channel`. */
  watches: { invoiceId: string; channel: string; ts: string }[];
}

/** The small installations and the big one, as many and with as many watches as `settings` says. */
export function tenantsOf(settings: { tenants: number; watchesEach: number; bigWatches: number }): {
  small: Tenant[];
  big: Tenant;
} {
  let seq = 0;
  const make = (id: InstallationId, index: number, count: number): Tenant => ({
    id,
    apiKey: `bench-key-${index}-${randomBytes(8).toString('hex')}`,
    botToken: `xoxb-bench-${index}-${randomBytes(8).toString('hex')}`,
    watches: Array.from({ length: count }, (_, k) => {
      seq += 1;
      return {
        invoiceId: invoiceIdOf(index, k),
        channel: `C${String(k % 5).padStart(8, '0')}`,
        ts: `1700000000.${String(seq).padStart(6, '0')}`,
      };
    }),
  });
  return {
    small: Array.from({ length: settings.tenants }, (_, i) => make(teamId(i), i, settings.watchesEach)),
    big: make(BIG, settings.tenants, settings.bigWatches),
  };
}

/** Installations with their keys connected, and their watches, as the bot stores them. */
export async function populate(
  store: Store,
  sealer: ReturnType<typeof createSealer>,
  all: Tenant[],
  payUrl: string,
) {
  const now = Date.now();
  await prepareSealing(store, sealer, now);
  const installations = createInstallations(store, sealer, () => now);
  for (let start = 0; start < all.length; start += 10) {
    await Promise.all(
      all.slice(start, start + 10).map(async (t) => {
        await installations.storeInstallation({
          team: { id: t.id },
          enterprise: undefined,
          isEnterpriseInstall: false,
          appId: 'A0APP',
          user: { id: 'U0INSTALLER', token: undefined, scopes: undefined },
          bot: {
            token: t.botToken,
            id: `B${t.id.slice(1)}`,
            userId: `U${t.id.slice(1)}`,
            scopes: ['chat:write', 'commands'],
          },
          tokenType: 'bot',
          authVersion: 'v2',
        } as Installation<'v2', false>);
        await installations.connectPaymentKey(t.id, t.apiKey, 'U0INSTALLER', now);
      }),
    );
  }
  // The snapshot as a check stores it, from the invoice the sandbox serves (bench/sandbox-worker.mjs).
  const template = { ...demoInvoices(payUrl)[0], timeout: '2099-01-01T00:00:00.000Z' };
  const snapshot = toSnapshot(invoiceSchema.parse(parseJson(stringify(template) ?? '')));
  const rows = all.flatMap((t) => t.watches.map((w) => ({ t, w })));
  for (let start = 0; start < rows.length; start += 500) {
    const batch = rows.slice(start, start + 500);
    await store.transaction(async (trx) => {
      await trx
        .insertInto('watches')
        .values(
          batch.map(({ t, w }) => ({
            id: `bench-${t.id}-${w.ts}`,
            installation_id: t.id,
            team_id: t.id,
            channel_id: w.channel,
            invoice_id: w.invoiceId,
            watcher_id: 'U0WATCHER',
            card_ts: w.ts,
            thread_ts: w.ts,
            state: 'active' as const,
            started_at: now,
            ends_at: now + 7 * 86_400_000,
            ended_at: null,
            end_reason: null,
          })),
        )
        .execute();
      await trx
        .insertInto('watched_invoices')
        .values(
          batch.map(({ t, w }) => ({
            installation_id: t.id,
            invoice_id: w.invoiceId,
            snapshot: JSON.stringify({ ...snapshot, id: w.invoiceId, link: `${payUrl}/pay/${w.invoiceId}` }),
            watched_since: now,
            next_poll_at: now,
            failures: 0,
            failing_since: null,
            lease_owner: null,
            lease_until: null,
          })),
        )
        .execute();
    });
  }
}

/** Just before the instances start: every watch young (the fast cadence), its checks spread over one interval. */
export async function spreadChecks(store: Store, pollSeconds: number): Promise<void> {
  const now = Date.now();
  await store.db
    .updateTable('watched_invoices')
    .set((eb) => ({
      watched_since: now,
      next_poll_at: eb(
        eb.val(now),
        '+',
        eb.fn<number>('floor', [eb(eb.fn('random'), '*', pollSeconds * 1000)]),
      ),
    }))
    .execute();
  await store.db.updateTable('watches').set({ started_at: now }).execute();
}

/** The live cards the watches keep current: chat.update finds them. */
export function keepCards(slack: SlackStandIn, all: Tenant[]): void {
  for (const t of all)
    for (const w of t.watches)
      slack.messages.push({
        channel: w.channel,
        ts: w.ts,
        threadTs: undefined,
        text: 'card',
        blocks: [],
        edits: [],
        deleted: false,
      });
}
