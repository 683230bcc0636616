import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Debian's Chromium for the browser test, installed by the project itself as PostgreSQL is
 * (test/support/postgres-server.ts): with apt-get when it is missing and we are root, as on CI.
 * No browser is downloaded from anywhere else; playwright-core drives this one.
 */

const CHROMIUM = '/usr/bin/chromium';

/** Flags for a quiet, headless run that reaches nothing outside the machine. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The path of Chromium, after installing it if need be. */
export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0) {
    throw new Error(`Chromium is not at ${CHROMIUM} and this is not root: install Debian’s chromium package`);
  }
  console.log('installing Chromium from Debian’s packages for the browser test …');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { env, stdio: 'inherit' });
  // Fonts, so the page and its screenshot show text and emoji as a reader would see them.
  const install = spawnSync(
    'apt-get',
    [
      'install',
      '-y',
      '-qq',
      '--no-install-recommends',
      'chromium',
      'fonts-liberation',
      'fonts-noto-color-emoji',
    ],
    { env, stdio: 'inherit' },
  );
  if (update.status !== 0 || install.status !== 0 || !existsSync(CHROMIUM)) {
    throw new Error('apt-get install chromium failed');
  }
  return CHROMIUM;
}
