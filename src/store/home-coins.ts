import { cut } from '../text.js';
import type { Store } from './database.js';
import type { InstallationId } from './keys.js';

/** The coin a person chose for their App Home's week of one coin, kept per installation and person. */
export interface HomeCoins {
  chosen(userId: string): Promise<string | undefined>;
  choose(userId: string, coin: string): Promise<void>;
}

/** Longest coin id kept: Slack's option values are at most 150 characters. */
const MAX_COIN = 150;

export function homeCoins(store: Store, installation: InstallationId): HomeCoins {
  const { db } = store;
  return {
    async chosen(userId) {
      const row = await db
        .selectFrom('home_coin_choices')
        .select('coin')
        .where('installation_id', '=', installation)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row?.coin;
    },
    async choose(userId, coin) {
      await db
        .insertInto('home_coin_choices')
        .values({ installation_id: installation, user_id: userId, coin: cut(coin, MAX_COIN) })
        .onConflict((oc) =>
          oc.columns(['installation_id', 'user_id']).doUpdateSet({ coin: cut(coin, MAX_COIN) }),
        )
        .execute();
    },
  };
}
