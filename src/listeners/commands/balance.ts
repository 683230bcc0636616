import { AccessDeniedError, balanceRefusal } from '../../access.js';
import type { CommandHandler } from '../../pipeline/ack-race.js';
import { reply } from '../../pipeline/reply.js';
import { balanceMessage } from '../../views/balance.js';
import { balanceHelp } from '../../views/help.js';
import type { ListenerDeps } from '../deps.js';

/** `/balance`: financial data, so always ephemeral, and only for those the policy allows. */
export function createBalanceCommand(deps: ListenerDeps): CommandHandler {
  return async (command) => {
    const text = command.text.trim().toLowerCase();
    if (text === 'help') return reply(balanceHelp(), 'ephemeral', 'help');
    const refusal = balanceRefusal(deps.balancePolicy, {
      teamId: command.team_id,
      userId: command.user_id,
      channelId: command.channel_id,
    });
    if (refusal) throw new AccessDeniedError(refusal, deps.balancePolicy.allowedChannels);
    if (text !== '') return reply(balanceHelp(), 'ephemeral', 'usage');
    const entries = await deps.payments.getBalance();
    return reply(balanceMessage(entries, deps.clock()), 'ephemeral');
  };
}
