import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { type ManifestOptions, type Mode, renderManifest } from '../../scripts/manifest.js';

/** The manifests the repository ships and the ones `npm run manifest` prints, read as Slack reads them. */

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const URL_BASE = 'https://bot.example.com';

// biome-ignore lint/suspicious/noExplicitAny: a manifest is YAML read back, checked field by field.
export type Manifest = any;

export const read = (name: string) => readFileSync(join(ROOT, name), 'utf8');
/** A manifest as Slack reads it: the YAML the command prints, parsed. */
export const printed = (options: ManifestOptions): Manifest => parse(renderManifest(options));
export const urlOf = (mode: Mode) => (mode === 'socket' ? {} : { url: URL_BASE });

/** Every combination the command prints (many workspaces take no step: Slack distributes none). */
export const ALL: ManifestOptions[] = (['socket', 'http', 'many'] as const).flatMap((mode) => [
  { mode, ...urlOf(mode) },
  ...(mode === 'many' ? [] : [{ mode, ...urlOf(mode), workflow: true }]),
]);
export const nameOf = (o: ManifestOptions) => `--mode ${o.mode}${o.workflow ? ' --workflow' : ''}`;

const SKIPPED = new Set(['node_modules', 'dist', '.git', 'reports', 'coverage', '.stryker-tmp']);

/** Every manifest file in the repository (manifest*.yml / .yaml / .json), by path from the root. */
export function shippedManifests(dir = ROOT, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIPPED.has(entry.name)) return [];
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return shippedManifests(join(dir, entry.name), path);
    return /^manifest[\w.-]*\.(ya?ml|json)$/.test(entry.name) ? [path] : [];
  });
}
