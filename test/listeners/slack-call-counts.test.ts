import { describe, expect, it } from 'vitest';
import { createAppHomeOpened } from '../../src/listeners/events/app-home-opened.js';
import { createGetInvoiceStep, type StepArgs } from '../../src/listeners/functions/get-invoice.js';
import { eventListener } from '../../src/pipeline/kinds.js';
import { captureLogs } from '../support/bolt.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * The Web API calls made through Bolt's client, as an operator reads them: counted under the
 * method's name where metrics are kept, and failing with Slack's own error where they are not.
 */
const env = useSandbox();

describe('Slack calls in the metrics', () => {
  it('counts the workflow step’s failure report under functions.completeError', async () => {
    const counted: string[] = [];
    const deps = {
      ...env.deps(),
      metrics: {
        request: () => undefined,
        slackCall: (method: string, result: string) => void counted.push(`${method} ${result}`),
      },
    };
    const args = {
      inputs: { invoice: 'order 1042' },
      complete: async () => undefined,
      fail: async () => undefined,
    };
    expect(await createGetInvoiceStep(deps)(args as unknown as StepArgs)).toEqual({
      outcome: 'invalid_input',
    });
    expect(counted).toEqual(['functions.completeError ok']);
  });
});

describe('Slack calls where no metrics are kept', () => {
  it('logs Slack’s own error when the Home view is refused', async () => {
    const logs = captureLogs();
    const deps = { ...env.deps({ logger: logs.logger }), metrics: undefined };
    const client = {
      views: {
        publish: async () => {
          throw new Error('An API error occurred: invalid_blocks');
        },
      },
    };
    const event = { type: 'app_home_opened', user: 'U0MEMBER', channel: 'D0HOME', tab: 'home' };
    await eventListener(
      deps,
      'app_home_opened',
      createAppHomeOpened(deps) as never,
    )({
      event,
      body: { team_id: 'T0HOME', event },
      client,
    } as never);
    expect(logs.lines.find((l) => l.level === 'error')).toMatchObject({
      msg: 'event app_home_opened failed',
      err: { message: 'An API error occurred: invalid_blocks' },
    });
  });
});
