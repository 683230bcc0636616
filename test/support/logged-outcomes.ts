import { beforeEach } from 'vitest';
import type { ButtonHandler } from '../../src/listeners/actions/click.js';
import { createBalanceCommand } from '../../src/listeners/commands/balance.js';
import { createInvoiceCommand } from '../../src/listeners/commands/invoice.js';
import type { ListenerDeps } from '../../src/listeners/deps.js';
import { actionListener, commandListener } from '../../src/pipeline/kinds.js';
import { buttonArgs, captureLogs, commandArgs, type DepsOptions } from './bolt.js';
import { emptyWork } from './empty-store.js';
import { useSandbox } from './use-sandbox.js';

/**
 * What the tests of the request log line's outcome share (issue 8: "the request log line's
 * outcome for each path"): a sandbox and a store emptied of the bot's work before each test, a
 * private channel `FINANCE` the bot sees, and `command` and `click`, which run a slash command or
 * a button through its listener and give back the one request log line and the reply.
 */

export const FINANCE = 'G0FINANCE';

type Action = (deps: ListenerDeps) => ButtonHandler;

export function useLoggedOutcomes() {
  const env = useSandbox();

  beforeEach(async () => {
    await emptyWork(env.store);
    env.poster.conversations.set(FINANCE, { isPrivate: true, isDirect: false, isShared: false });
  });

  function logged(opts: DepsOptions = {}) {
    const logs = captureLogs();
    const deps = env.deps({ ...opts, logger: logs.logger });
    const line = (msg: string) => logs.lines.find((l) => l.msg === msg);
    return { deps, logs, line };
  }

  async function command(
    name: '/invoice' | '/balance',
    text: string,
    overrides: Record<string, string> = {},
    opts: DepsOptions = {},
  ) {
    const { deps, line } = logged(opts);
    const handler = name === '/invoice' ? createInvoiceCommand(deps) : createBalanceCommand(deps);
    const { args, rec } = commandArgs({ command: name, text, ...overrides });
    await commandListener(deps, name, handler)(args);
    return { line: line(`command ${name}`), reply: rec.acks[0] ?? rec.responses[0] };
  }

  async function click(
    actionId: string,
    create: Action,
    value: string,
    shape: (body: ReturnType<typeof buttonArgs>['args']['body']) => void = () => undefined,
    opts: DepsOptions = {},
  ) {
    const { deps, line } = logged(opts);
    const { args, rec } = buttonArgs(value, { actionId });
    shape(args.body);
    await actionListener(deps, actionId, create(deps))(args);
    return {
      line: line(`action ${actionId}`),
      reply: rec.responses.at(-1) as Record<string, unknown> | undefined,
    };
  }

  return { env, logged, command, click };
}
