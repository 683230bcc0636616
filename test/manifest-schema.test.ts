import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { FUNCTION_GET_INVOICE } from '../src/listeners/functions/get-invoice.js';
import { ALL, nameOf, printed, ROOT, read, shippedManifests } from './support/manifests.js';
import { manifestProblems } from './support/slack-manifest.js';

/**
 * Every manifest the repository ships and every one `npm run manifest` prints, against the shape
 * Slack documents for a Bolt app's v1 manifest (test/support/slack-manifest.ts names the sources),
 * so a manifest Slack would refuse fails here and not when someone pastes it.
 */

const shipped = shippedManifests();
const fromFile = (path: string): unknown => parse(readFileSync(join(ROOT, path), 'utf8'));
const everyManifest = (): { name: string; manifest: Record<string, unknown> & { settings?: unknown } }[] => [
  ...shipped.map((name) => ({ name, manifest: fromFile(name) as Record<string, unknown> })),
  ...ALL.map((options) => ({ name: `npm run manifest -- ${nameOf(options)}`, manifest: printed(options) })),
];

describe('the manifests, as Slack documents them', () => {
  it('finds the manifests the repository ships', () => {
    expect(shipped).toEqual(expect.arrayContaining(['manifest.yml', 'manifest.workflow.yml']));
  });

  it('are all valid v1 manifests of a Bolt app: functions, parameters, types, lengths, settings', () => {
    for (const { name, manifest } of everyManifest()) expect(manifestProblems(manifest), name).toEqual([]);
  });

  it('write a step’s parameters as v1 does: a flat map, each with its type, title and description', () => {
    const step = printed({ mode: 'socket', workflow: true }).functions[FUNCTION_GET_INVOICE];
    expect(step.input_parameters.properties).toBeUndefined();
    expect(step.input_parameters.required).toBeUndefined();
    expect(step.output_parameters.properties).toBeUndefined();
    expect(step.input_parameters.invoice).toMatchObject({ type: 'string', is_required: true });
    for (const map of [step.input_parameters, step.output_parameters])
      for (const [name, parameter] of Object.entries<Record<string, unknown>>(map)) {
        expect(parameter.title, name).toEqual(expect.any(String));
        expect(parameter.description, name).toEqual(expect.any(String));
      }
  });

  it('are org-ready, so an organisation can install the app org-wide, as the README describes', () => {
    for (const { name, manifest } of everyManifest())
      expect((manifest.settings as { org_deploy_enabled?: boolean }).org_deploy_enabled, name).toBe(true);
    // The README says how such an install is made, and the manifests' header says it to whoever pastes one.
    expect(read('README.md')).toMatch(/Install\s+to\s+Organization/);
    expect(read('manifest.yml')).toMatch(/whole organisation/);
  });
});

describe('the check itself', () => {
  const valid = () => structuredClone(printed({ mode: 'socket', workflow: true }));

  it('refuses the Deno SDK’s v2 form of parameters under major_version 1', () => {
    const m = valid();
    const step = m.functions[FUNCTION_GET_INVOICE];
    step.input_parameters = { properties: step.input_parameters, required: ['invoice'] };
    expect(manifestProblems(m).join('\n')).toMatch(/input_parameters/);
  });

  it('refuses a step Slack would refuse: an unknown type, a title over 255 characters, no description', () => {
    const typed = valid();
    typed.functions[FUNCTION_GET_INVOICE].input_parameters.invoice.type = 'text';
    expect(manifestProblems(typed).join('\n')).toMatch(/invoice\.type/);
    const long = valid();
    long.functions[FUNCTION_GET_INVOICE].title = 'x'.repeat(256);
    expect(manifestProblems(long).join('\n')).toMatch(/title/);
    const bare = valid();
    delete bare.functions[FUNCTION_GET_INVOICE].description;
    expect(manifestProblems(bare).join('\n')).toMatch(/description/);
  });

  it('refuses a step without what a Bolt step needs: remote runtime, an org-ready app, its event', () => {
    const local = valid();
    delete local.settings.function_runtime;
    expect(manifestProblems(local).join('\n')).toMatch(/function_runtime: remote/);
    const workspaceOnly = valid();
    workspaceOnly.settings.org_deploy_enabled = false;
    expect(manifestProblems(workspaceOnly).join('\n')).toMatch(/org_deploy_enabled/);
    const deaf = valid();
    deaf.settings.event_subscriptions.bot_events = ['link_shared'];
    expect(manifestProblems(deaf).join('\n')).toMatch(/function_executed/);
  });

  it('refuses the app-level limits: a name over 35 characters, a key Slack does not know', () => {
    const m = valid();
    m.display_information.name = 'x'.repeat(36);
    m.settings.org_deploy = true;
    const problems = manifestProblems(m).join('\n');
    expect(problems).toMatch(/display_information\.name/);
    expect(problems).toMatch(/org_deploy/);
  });
});
