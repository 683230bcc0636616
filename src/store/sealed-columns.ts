import type { Kysely } from 'kysely';
import type { InstallationId } from './keys.js';
import type { Tables } from './schema.js';
import type { Sealer } from './sealing.js';

/** The installations' columns that hold a secret, sealed. */
export type Secret = 'bot_token' | 'bot_refresh_token' | 'payment_api_key';
export const SECRETS: readonly Secret[] = ['bot_token', 'bot_refresh_token', 'payment_api_key'];

/** What each sealed value is bound to: a value copied into another installation's row does not open. */
export const contextOf = (id: InstallationId, column: Secret) => `installation:${id}:${column}`;

/**
 * Opens the secrets a use needs of an installation's row (a request's authorization never opens
 * the payment key); those sealed with the previous key are sealed again with the current one.
 */
export function secretsOpener(db: Kysely<Tables>, sealer: Sealer) {
  return async function open<S extends Secret>(
    row: { id: InstallationId } & Record<S, string | null>,
    columns: readonly S[],
  ): Promise<Record<S, string | undefined>> {
    const opened = {} as Record<S, string | undefined>;
    const resealed: Partial<Record<S, string>> = {};
    for (const column of columns) {
      const sealed = row[column];
      if (sealed === null) continue;
      const { plaintext, stale } = sealer.open(sealed, contextOf(row.id, column));
      opened[column] = plaintext;
      if (stale) resealed[column] = sealer.seal(plaintext, contextOf(row.id, column));
    }
    if (Object.keys(resealed).length > 0) {
      // Only if each value is still the one opened: a newer write (even within the same
      // millisecond) keeps its own values.
      let update = db.updateTable('installations').set(resealed).where('id', '=', row.id);
      for (const column of Object.keys(resealed) as S[])
        update = update.where(column as Secret, '=', row[column] as string);
      await update.execute();
    }
    return opened;
  };
}
