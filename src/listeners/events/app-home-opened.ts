import type { SlackEventMiddlewareArgs } from '@slack/bolt';
import type { Tracked } from '../../pipeline/tracked.js';
import type { ListenerDeps } from '../deps.js';
import { type HomeClient, publishHome } from '../home.js';

/** The App Home tab opened: the person's home, published afresh. */
export function createAppHomeOpened(deps: ListenerDeps) {
  return async ({
    event,
    client,
  }: SlackEventMiddlewareArgs<'app_home_opened'> & { client: HomeClient }): Promise<Tracked> => {
    if (event.tab !== 'home') return { outcome: 'ok', quiet: true };
    return publishHome(deps, client, event.user);
  };
}
