import { describe, expect, it } from 'vitest';
import { renderManifest, STEP_EVENT, UsageError } from '../scripts/manifest.js';
import {
  createGetInvoiceStep,
  FUNCTION_GET_INVOICE,
  type StepArgs,
} from '../src/listeners/functions/get-invoice.js';
import { DEMO_INVOICE_IDS } from '../src/sandbox/data.js';
import { startSandbox } from '../src/sandbox/server.js';
import { openStore } from '../src/store/database.js';
import { listenerDeps } from './support/bolt.js';
import { recordingPoster } from './support/fake-slack.js';
import { ALL, nameOf, printed, URL_BASE, urlOf } from './support/manifests.js';

/** The Workflow Builder step "Get invoice" in the manifests (`--workflow`), against its listener. */

const unique = <T>(items: T[]) => [...new Set(items)].sort();

/** The step, run as Slack runs it: which inputs it reads, and what it completes with. */
async function runStep(): Promise<{ read: string[]; outputs: string[] }> {
  const sandbox = await startSandbox();
  const read = new Set<string>();
  const outputs: string[] = [];
  try {
    const store = await openStore({ kind: 'sqlite', path: ':memory:' });
    const { deps, close } = listenerDeps(sandbox, store, recordingPoster());
    const inputs = new Proxy(
      { invoice: `${sandbox.payUrl}/pay/${DEMO_INVOICE_IDS.open}` } as Record<string, unknown>,
      {
        get(target, key: string) {
          read.add(key);
          return target[key];
        },
      },
    );
    await createGetInvoiceStep(deps)({
      inputs,
      complete: async ({ outputs: given }: { outputs: Record<string, unknown> }) =>
        void outputs.push(...Object.keys(given)),
      fail: async () => undefined,
    } as unknown as StepArgs);
    await close();
    await store.close();
  } finally {
    await sandbox.close();
  }
  return { read: [...read].sort(), outputs: outputs.sort() };
}

describe('the Workflow Builder step in the manifest', () => {
  it('without --workflow: no functions and no function runtime', () => {
    for (const options of ALL.filter((o) => !o.workflow)) {
      const m = printed(options);
      expect(m.functions, nameOf(options)).toBeUndefined();
      expect(m.settings.function_runtime, nameOf(options)).toBeUndefined();
    }
  });

  it('--workflow: the same app plus the Get invoice step and what a custom step needs, nothing else', () => {
    for (const mode of ['socket', 'http'] as const) {
      const { functions, settings, ...rest } = printed({ mode, ...urlOf(mode), workflow: true });
      const { settings: baseSettings, ...baseRest } = printed({ mode, ...urlOf(mode) });
      expect(rest).toEqual(baseRest);
      const { function_runtime, event_subscriptions, ...otherSettings } = settings;
      const { event_subscriptions: baseEvents, ...baseOther } = baseSettings;
      expect(otherSettings).toEqual(baseOther);
      expect(function_runtime).toBe('remote');
      expect(settings.org_deploy_enabled).toBe(true);
      expect(unique(event_subscriptions.bot_events)).toEqual(unique([...baseEvents.bot_events, STEP_EVENT]));
      expect(Object.keys(functions)).toEqual([FUNCTION_GET_INVOICE]);
    }
  });

  it('is refused for many workspaces, saying why: Slack distributes no app with custom steps', () => {
    expect(() => renderManifest({ mode: 'many', url: URL_BASE, workflow: true })).toThrow(UsageError);
    expect(() => renderManifest({ mode: 'many', url: URL_BASE, workflow: true })).toThrow(
      /does not distribute apps with custom steps/,
    );
  });

  it('declares the input the listener reads as a required parameter, and exactly the outputs it completes with', async () => {
    const { read, outputs } = await runStep();
    expect(outputs.length).toBeGreaterThan(0);

    const step = printed({ mode: 'socket', workflow: true }).functions[FUNCTION_GET_INVOICE];
    expect(step.title).toBe('Get invoice');
    // v1: each parameter is a key of the map, the required ones say so themselves.
    expect(Object.keys(step.input_parameters).sort()).toEqual(read);
    for (const name of read) expect(step.input_parameters[name].is_required, name).toBe(true);
    expect(Object.keys(step.output_parameters).sort()).toEqual(outputs);
    expect(step.output_parameters.expires_at.type).toBe('slack#/types/timestamp');
  });
});
