import { webApi } from '@slack/bolt';

/** Why a call Slack answers at start failed, in words that tell the admin what to fix. */
export function startFailure(
  error: unknown,
  call: string,
  variable: string,
  fix: string,
  apiUrl: string,
): string {
  if (error instanceof webApi.WebAPIPlatformError) {
    return `Slack rejected ${variable} (${error.data.error}); ${fix}`;
  }
  if (error instanceof webApi.WebAPIRequestError) {
    return `could not reach Slack at ${apiUrl} (${error.original.message}); check the network or SLACK_API_URL`;
  }
  if (error instanceof webApi.WebAPIHTTPError)
    return `Slack answered HTTP ${error.statusCode} to ${call} at ${apiUrl}`;
  return `${call} failed: ${error instanceof Error ? error.message : String(error)}`;
}
