// A Stryker test runner: Stryker's vitest runner, plus one rule it misses.
//
// The vitest runner judges a mutant by the tests a run collected. A mutant that makes a module
// throw while it loads (a module-level helper replaced by `() => undefined`) fails whole test
// files before any of their tests is collected, so the run holds no failed test and the mutant
// was reported as Survived, although `npm test` fails on it. Here a run in which a test file
// failed to load counts as killed, by that file.
import { commonTokens, declareFactoryPlugin, PluginKind, tokens } from '@stryker-mutator/api/plugin';
import { MutantRunStatus } from '@stryker-mutator/api/test-runner';
import { strykerPlugins as vitestPlugins } from '@stryker-mutator/vitest-runner';

const vitest = vitestPlugins.find((plugin) => plugin.name === 'vitest');

/** The first test file that failed as a whole (at load), with why. */
function fileThatFailed(runner) {
  for (const file of runner.ctx?.state.getFiles() ?? []) {
    if (file.result?.state === 'fail') {
      return { file: file.filepath, message: file.result.errors?.[0]?.message ?? 'the file failed to load' };
    }
  }
  return undefined;
}

function createRunner(injector) {
  const runner = vitest.factory(injector);
  const mutantRun = runner.mutantRun.bind(runner);
  runner.mutantRun = async (options) => {
    const result = await mutantRun(options);
    if (result.status !== MutantRunStatus.Survived) return result;
    const failed = fileThatFailed(runner);
    if (!failed) return result;
    return {
      status: MutantRunStatus.Killed,
      killedBy: [],
      failureMessage: `${failed.file} failed to load: ${failed.message}`,
      nrOfTests: result.nrOfTests,
    };
  };
  return runner;
}
createRunner.inject = tokens(commonTokens.injector);

export const strykerPlugins = [
  declareFactoryPlugin(PluginKind.TestRunner, 'vitest-load-errors', createRunner),
];
