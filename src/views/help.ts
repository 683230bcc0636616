import { context, fallbackText, header, type Message, section } from './blocks.js';
import { EXAMPLE_INVOICE_ID } from './errors.js';
import { md } from './mrkdwn.js';

export function balanceHelp(): Message {
  const body = md`\`/balance\` shows the merchant's balance in each cryptocurrency, summed over all projects (shops). Only you see the reply.
Currencies holding funds come first; zero balances are listed after them. Balances are not frozen: everything shown is available for withdrawal.`;
  const feed = md`*Payments feed*: \`/balance subscribe ${'[HH:MM [Area/City]]'}\` in a private channel posts there whatever arrives or leaves, as it happens, and a digest every day at that time (default 09:00 in your own Slack time zone); where the feed is on already, it moves the digest. \`/balance unsubscribe\` turns it off; \`/balance subscriptions\` lists the channels that receive it. Never in a DM or a channel shared with another organisation.`;
  return {
    text: fallbackText(body),
    blocks: [
      header('/balance'),
      section(body),
      section(feed),
      context(md`Access may be limited to some people and channels by the bot's admin.`),
    ],
  };
}

export function invoiceHelp(visibility: 'in_channel' | 'ephemeral', maxWatchDays = 7): Message {
  const who =
    visibility === 'in_channel' ? 'everyone in the channel sees the reply' : 'only you see the reply';
  const body = md`\`/invoice ${'<id or payment link>'}\` shows one invoice: its status and payment status, amount and fee, when it was created and when it expires, the accepted cryptocurrencies and the shop. A button opens the payment page; *Refresh* reads the invoice again and updates the message.

Examples:
• \`/invoice ${EXAMPLE_INVOICE_ID}\`
• \`/invoice https://pay.example.com/pay/${EXAMPLE_INVOICE_ID}\`

When it works, ${who}. Errors are only shown to you.`;
  const watching = md`*Watching*: \`/invoice watch ${'<id or link>'}\` posts a live card in this channel that I keep current, and I reply in its thread, mentioning you, whenever the status, payment, amount, expiry or methods change. *Watch* on any invoice card does the same in that card's thread. \`/invoice watching\` lists this channel's watches; \`/invoice unwatch ${'<id or link>'}\` or *Stop watching* ends one. A watch ends by itself once the invoice no longer awaits payment (paid, closed or expired) or its expiry has passed, after ${maxWatchDays} ${maxWatchDays === 1 ? 'day' : 'days'} at most.`;
  return { text: fallbackText(body), blocks: [header('/invoice'), section(body), section(watching)] };
}

/** What to type after `/invoice` (or `/invoice watch`, `/invoice unwatch`) when nothing followed. */
export function invoiceUsage(verb: 'show' | 'watch' | 'unwatch' = 'show'): Message {
  const command = verb === 'show' ? '/invoice' : `/invoice ${verb}`;
  const body = md`Give an invoice id or paste a payment link, for example \`${command} ${EXAMPLE_INVOICE_ID}\`. \`/invoice help\` tells more.`;
  return { text: fallbackText(body), blocks: [section(body)] };
}
