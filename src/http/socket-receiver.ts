import { type App, SocketModeReceiver, webApi } from '@slack/bolt';
import { boltLogger, type Logger } from '../logger.js';
import { refusesToken, watchingConnectionsOpen } from '../slack/socket-open.js';
import { startFailure } from '../slack/start-failure.js';

/** What to do about an app-level token Slack refuses. */
const FIX = 'generate an app-level token with connections:write under Basic Information';
/** The first wait before Socket Mode's connection is tried again after a failure; it doubles each time. */
const FIRST_RETRY_MS = 1_000;
const LAST_RETRY_MS = 30_000;

/** Slack refused the app-level token itself: the start stops, naming SLACK_APP_TOKEN. */
export class TokenRefusedError extends Error {
  override readonly name = 'TokenRefusedError';
}

interface SocketModeOptions {
  appToken: string;
  /** The Web API client's options (SLACK_API_URL, deadlines). */
  clientOptions: webApi.WebClientOptions & { slackApiUrl: string };
  logger: Logger;
}

/** Resolves when `signal` aborts, or after `ms`. */
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/**
 * Socket Mode's receiver, and its start. The start ends when the connection is open; until then
 * every failure is said in an error line. Slack refusing the app-level token itself
 * (`invalid_auth`, `token_revoked`…) stops the start, naming SLACK_APP_TOKEN and what to do;
 * anything else (Slack unreachable, Slack's own trouble) is tried again, with waits that double
 * up to 30 s, as long as it takes. /healthz answers meanwhile (src/lifecycle.ts).
 */
export function socketMode(options: SocketModeOptions) {
  const { logger } = options;
  const apiUrl = options.clientOptions.slackApiUrl;
  let started = false;
  let refuse: (error: TokenRefusedError) => void = () => undefined;
  const refused = new Promise<never>((_resolve, reject) => {
    refuse = reject;
  });
  refused.catch(() => undefined);

  const onRefused = (code: string) => {
    const fatal = refusesToken(code);
    if (fatal && !started) refuse(new TokenRefusedError(`Slack rejected SLACK_APP_TOKEN (${code}); ${FIX}`));
    else
      logger.error(
        { error: code },
        fatal
          ? `Slack rejected SLACK_APP_TOKEN (${code}) on reconnecting; ${FIX}, then restart the bot`
          : `Slack refused to open a Socket Mode connection (${code}); Socket Mode tries again`,
      );
  };

  const receiver = new SocketModeReceiver({
    appToken: options.appToken,
    logger: boltLogger(logger),
    installerOptions: {
      clientOptions: { ...options.clientOptions, fetch: watchingConnectionsOpen(onRefused) },
    },
  });

  async function start(app: App, stopped: AbortSignal): Promise<void> {
    const aborted = new Promise<void>((resolve) =>
      stopped.addEventListener('abort', () => resolve(), { once: true }),
    );
    for (let attempt = 0; !stopped.aborted; attempt += 1) {
      try {
        await Promise.race([app.start(), refused, aborted]);
        started = true;
        return;
      } catch (error) {
        if (error instanceof TokenRefusedError) throw error;
        if (error instanceof webApi.WebAPIPlatformError && refusesToken(error.data.error))
          throw new TokenRefusedError(
            startFailure(error, 'apps.connections.open', 'SLACK_APP_TOKEN', FIX, apiUrl),
            {
              cause: error,
            },
          );
        const waitMs = Math.min(LAST_RETRY_MS, FIRST_RETRY_MS * 2 ** attempt);
        const why = startFailure(error, 'apps.connections.open', 'SLACK_APP_TOKEN', FIX, apiUrl);
        logger.error(`Socket Mode could not connect: ${why}. Trying again in ${waitMs / 1000} s`);
        await pause(waitMs, stopped);
      }
    }
  }

  return { receiver, start };
}
