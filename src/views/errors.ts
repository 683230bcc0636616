import { AccessDeniedError, type Action } from '../access.js';
import type { Command } from '../domain/commands.js';
import { type AnyPaymentError, isPaymentError } from '../payments/index.js';
import { slackWasBusy } from '../slack/calls.js';
import { fallbackText, type Message, section } from './blocks.js';
import { channelMention, esc, join, type Mrkdwn, md } from './mrkdwn.js';

export const EXAMPLE_INVOICE_ID = '3fa85f64-5717-4562-b3fc-2c963f66afa6';

interface Explanation {
  title: string;
  body: Mrkdwn;
}

/** "in a minute", "in 5 minutes", "in 2 hours": a wait as a person reads it (never more than the cap). */
export function waitInWords(ms: number | undefined): string {
  if (ms === undefined || ms <= 60_000) return 'in a minute';
  const minutes = Math.ceil(ms / 60_000);
  if (minutes < 60) return `in ${minutes} minutes`;
  const hours = Math.ceil(minutes / 60);
  return hours === 1 ? 'in an hour' : `in ${hours} hours`;
}

function explainPaymentError(error: AnyPaymentError): Explanation {
  switch (error.code) {
    case 'invoice_not_found':
      return {
        title: 'Invoice not found',
        body: md`The payment service has no invoice \`${esc(error.invoiceId, 100)}\`. Check the id or link; an invoice made under another merchant account cannot be read with this bot's key.`,
      };
    case 'invalid_api_key':
      return {
        title: 'The payment service rejected the bot’s API key',
        body: md`The bot cannot read invoices or balances until this is fixed. An admin of this bot should check its API key: \`PAYMENT_API_KEY\` in its configuration, or *Replace key* on the app’s Home tab where the workspace connected its own account. Any active project’s key works.`,
      };
    case 'rate_limited':
      return {
        title: 'The payment service is busy',
        body: md`It is receiving too many requests right now. Try again ${waitInWords(error.retryAfterMs)}.`,
      };
    case 'busy':
      return {
        title: 'The bot is answering too many requests right now',
        body: md`Try again in a minute.`,
      };
    case 'timeout':
      return {
        title: 'The payment service did not answer in time',
        body: md`Try again in a minute. If it keeps happening, the service may be having trouble.`,
      };
    case 'service_unavailable':
      return {
        title: 'The payment service is unavailable',
        body: md`It could not be reached or is failing right now. Try again in a few minutes.`,
      };
    case 'service_down':
      return {
        title: 'The payment service is not answering',
        body: md`The bot will keep trying and knows as soon as it answers again. Try again in a few minutes.`,
      };
    case 'unexpected_response':
      return {
        title: 'The payment service sent an answer the bot could not read',
        body: md`Try again later. If it keeps happening, tell the bot’s admin: the details are in the bot’s logs.`,
      };
    case 'service_error': {
      const said = error.serviceMessage ? md`: ${esc(error.serviceMessage, 200)}` : md``;
      return {
        title: 'The payment service answered with an error',
        body: md`HTTP ${error.status ?? 0}${said}. Try again later, or tell the bot’s admin if it keeps happening.`,
      };
    }
  }
}

/** Said to someone of another organisation (a guest in a Slack Connect channel), by what they asked. */
function otherOrganisation(what: Action): Explanation {
  switch (what) {
    case 'change_watch':
      return {
        title: 'Watches are only for members of this workspace',
        body: md`Starting or stopping a watch changes what the channel is told, so it cannot be done from another organisation, for example in a shared channel.`,
      };
    case 'change_card':
      return {
        title: 'Sharing and refreshing invoice cards is only for members of this workspace',
        body: md`It changes what everyone in the channel sees, so it cannot be done from another organisation. \`/invoice ${'<id>'}\` still shows you the invoice.`,
      };
    default:
      return {
        title: 'The balance is only for members of this workspace',
        body: md`\`/balance\` shows the merchant’s financial data, so it cannot be used from another organisation, for example in a shared channel.`,
      };
  }
}

function explainRefusal(error: AccessDeniedError): Explanation {
  switch (error.refusal) {
    case 'direct_message':
      return {
        title: 'The payments feed cannot go to a direct message',
        body: md`Run \`/balance subscribe\` in a private channel for finance, with the bot invited.`,
      };
    case 'shared_channel':
      return {
        title: 'The payments feed cannot go to a shared channel',
        body: md`This channel is shared with another organisation, and the feed is the merchant’s financial data. Use a private channel of this workspace.`,
      };
    case 'public_channel':
      return {
        title: 'The payments feed needs a private channel',
        body: error.listable
          ? md`Everyone in this workspace can read a public channel. Use a private channel, or ask the bot’s admin to list this one in \`BALANCE_ALLOWED_CHANNELS\`.`
          : md`Everyone in this workspace can read a public channel, and the feed is the merchant’s financial data. Use a private channel, with the bot invited.`,
      };
    case 'other_workspace':
      return otherOrganisation(error.what);
    case 'guest':
      return {
        title: 'This is only for full members of this workspace',
        body: md`Guests of the workspace do not see the merchant’s payments and do not change what the bot tells a channel. Ask a full member of the workspace.`,
      };
    case 'user_not_allowed':
      return {
        title: 'You are not allowed to see the balance',
        body: md`Only the people the bot’s admin listed can use \`/balance\`. Ask the admin to add you to \`BALANCE_ALLOWED_USERS\`.`,
      };
    case 'channel_not_allowed': {
      const where =
        error.allowedChannels.length > 0
          ? md` Use it in ${join(error.allowedChannels.slice(0, 20).map(channelMention), ', ')}.`
          : md``;
      return {
        title: 'The balance is not available in this channel',
        body: md`\`/balance\` only works in the channels the bot’s admin set for it.${where}`,
      };
    }
  }
}

const INTERNAL: Explanation = {
  title: 'Something went wrong inside the bot',
  body: md`Try again. If it keeps happening, tell the bot’s admin: the details are in the bot’s logs.`,
};

/** What the person typed is not an invoice id or payment link; quoted back, cut and escaped. */
export function invalidInvoiceMessage(input: string): Message {
  return warning(
    'That is not an invoice id',
    md`\`${esc(input.replace(/`/g, "'"), 200)}\` is not an invoice id or payment link. An invoice id looks like \`${EXAMPLE_INVOICE_ID}\`; you can also paste the invoice's payment link.`,
  );
}

/** What each command takes before anything else, as its help names it. */
const TAKES: Readonly<Record<Command, Mrkdwn>> = {
  '/invoice': md`\`/invoice\` takes an invoice id or payment link, alone or after \`watch\` or \`unwatch\`; or \`watching\`, or \`help\`.`,
  '/balance': md`\`/balance\` alone shows the balance; it also takes \`subscribe ${'[HH:MM [Area/City]]'}\`, \`unsubscribe\`, \`subscriptions\` and \`help\`.`,
};

/** What the person typed, for a code span: backticks turned to quotes, escaped and cut. */
const typed = (text: string, max: number) => esc(text.replace(/`/g, "'"), max);

/**
 * A first word the command does not take (`/invoice wach <id>`, `/balance foo bar`): named back,
 * with the command it most likely meant, ready to type again, and what the command takes.
 */
export function unknownWordMessage(input: {
  command: Command;
  word: string;
  suggestion: string | undefined;
  rest: string;
}): Message {
  const { command, word, suggestion, rest } = input;
  const meant =
    suggestion === undefined
      ? md``
      : md` Did you mean \`${command} ${suggestion}${rest === '' ? '' : md` ${typed(rest, 200)}`}\`?`;
  return warning(
    `Not something ${command} does`,
    md`\`${typed(word, 60)}\` is not a word \`${command}\` knows.${meant} ${TAKES[command]}`,
  );
}

/**
 * A link on another host than the merchant's payment links (`PAYMENT_PAY_URL`): which host it
 * is on, and the one payment links are expected on.
 */
export function linkElsewhereMessage(input: string, host: string, payUrl: URL): Message {
  const example = `${payUrl.origin}${payUrl.pathname.replace(/\/+$/, '')}/pay/<id>`;
  return warning(
    'That is not one of this merchant’s payment links',
    md`\`${typed(input, 200)}\` is a link to \`${esc(host, 200)}\`; payment links are on \`${esc(payUrl.host, 200)}\`, like \`${esc(example, 300)}\`. Paste one of those, or the invoice id.`,
  );
}

/**
 * A click whose button value is not one the bot wrote (a card from an older version, a forged
 * click): nothing was done, and a fresh card has buttons that work.
 */
export function staleButtonMessage(): Message {
  return warning('That button no longer works', md`Run \`/invoice ${'<id>'}\` again for a fresh card.`);
}

/** Slack did not take a post the person asked for (it asked to slow down, or did not answer). */
const SLACK_BUSY: Explanation = {
  title: 'Slack did not take the message',
  body: md`Slack asked the bot to slow down or did not answer, so nothing was posted. Try again in a minute.`,
};

const explain = (error: unknown): Explanation =>
  isPaymentError(error)
    ? explainPaymentError(error)
    : error instanceof AccessDeniedError
      ? explainRefusal(error)
      : slackWasBusy(error)
        ? SLACK_BUSY
        : INTERNAL;

/** What went wrong, in one line of plain words ("Invoice not found"), for a card or a workflow. */
export const errorTitle = (error: unknown): string => explain(error).title;

/** Explains what went wrong and what to do; `intro` prefixes the title (e.g. for a failed refresh). */
export function errorMessage(error: unknown, intro?: string): Message {
  const { title, body } = explain(error);
  return warning(intro ? `${intro}: ${title.charAt(0).toLowerCase()}${title.slice(1)}` : title, body);
}

function warning(heading: string, body: Mrkdwn): Message {
  return {
    text: fallbackText(md`${heading}. ${body}`),
    blocks: [section(md`:warning: *${heading}*\n${body}`)],
  };
}
