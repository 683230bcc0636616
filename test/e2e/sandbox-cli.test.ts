import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';

/** `npm run sandbox` as a person types it: settings checked, a clear line for each mistake. */

const ROOT = new URL('../../', import.meta.url).pathname;

async function runSandbox(env: Record<string, string>, untilOutput?: RegExp) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/sandbox/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
    if (untilOutput?.test(output)) child.kill('SIGTERM');
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, output };
}

describe('npm run sandbox', () => {
  it.each([
    [{ SANDBOX_PORT: 'abc' }, 'SANDBOX_PORT: must be a port number (digits only)'],
    [{ SANDBOX_PORT: '70000' }, 'SANDBOX_PORT: must be a port number from 0 to 65535'],
    [{ SANDBOX_LATENCY_MS: 'abc' }, 'SANDBOX_LATENCY_MS: must be milliseconds (digits only)'],
  ])('refuses %o with one clear line, no stack trace', async (env, line) => {
    const { code, output } = await runSandbox(env);
    expect(code).toBe(1);
    expect(output.trim()).toBe(line);
  });

  it('starts, prints what to put in .env, and stops on SIGTERM', async () => {
    const { code, output } = await runSandbox(
      { SANDBOX_PORT: '0', SANDBOX_LATENCY_MS: '' },
      /Ctrl-C stops it/,
    );
    expect(code).toBe(0);
    expect(output).toMatch(/PAYMENT_API_URL=http:\/\/127\.0\.0\.1:\d+/);
    expect(output).toContain('PAYMENT_API_KEY=sandbox-');
  });
});
