/** The shapes of Slack ids the bot reads from its configuration and writes into mentions. */
export const USER_ID = /^[UW][A-Z0-9]+$/;
export const CHANNEL_ID = /^[CGD][A-Z0-9]+$/;
