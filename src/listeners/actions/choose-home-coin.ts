import { z } from 'zod';
import { acknowledge } from '../../pipeline/delivery.js';
import type { Tracked } from '../../pipeline/tracked.js';
import type { ListenerDeps } from '../deps.js';
import { publishHome } from '../home.js';
import type { ButtonArgs } from './click.js';

/** What a choice in the App Home's coin menu carries; anything else is not the bot's menu. */
const CHOICE = z.object({
  type: z.literal('static_select'),
  selected_option: z.object({ value: z.string().min(1).max(150) }),
});

/**
 * A coin chosen in the App Home's menu (views/home-trend.ts): kept for this person in this
 * installation, for those who may see the balance, and their Home published again with that
 * coin's week. The menu is in the Home, which has no response_url: the new Home is the answer.
 */
export function createChooseHomeCoinAction(deps: ListenerDeps) {
  return async ({ ack, body, action, client }: ButtonArgs): Promise<Tracked> => {
    await acknowledge(ack, deps.logger);
    const choice = CHOICE.safeParse(action);
    if (!choice.success) {
      deps.logger.warn({ action: action.action_id }, 'a coin menu choice the bot did not offer');
      return { outcome: 'invalid_input' };
    }
    const refused = await deps.access.refusal({
      who: { userId: body.user.id, teamId: body.user.team_id },
      where: { channelId: undefined },
      what: 'read_balance',
    });
    if (!refused) await deps.homeCoins?.choose(body.user.id, choice.data.selected_option.value);
    await publishHome(deps, client, body.user.id);
    return { outcome: refused ?? 'ok', delivery: 'view' };
  };
}
