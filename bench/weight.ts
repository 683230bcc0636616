/**
 * The "weight" scenario of `npm run bench`: how much heap one installation takes while the
 * many-workspaces bot keeps it in memory (src/installations/tenants.ts: its row, that is its
 * token, payments client, health, service state, rules and people), and what using it costs now
 * that its handlers, watches and feeds are made for each request or check. It keeps
 * BENCH_WEIGHT_TENANTS installations (default 2,000, the number kept by default), each connected
 * with its own key (test/support/kept-installations.ts: clients made as src/main.ts makes them),
 * serves each one request (its /balance handler) and one check (its watches and feed), and reads
 * the heap after a full garbage collection before and after. test/installations/weight.test.ts
 * runs it small, as a bound.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type InstallationId, installationId } from '../src/store/keys.js';
import { connectedInstallation, keptInstallations } from '../test/support/kept-installations.js';
import { round } from './lib.js';

export interface WeightResult {
  tenants: number;
  /** Heap taken per installation kept, in KB. */
  perTenantKb: number;
  /** Heap taken by all of them, in MB. */
  totalMb: number;
  /** CPU time to make a kept installation's handler for a request (/balance), in microseconds. */
  requestUs: number;
  /** CPU time to make a kept installation's watches and feed for a check, in microseconds. */
  checkUs: number;
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

export async function weightScenario(serviceUrl: string, tenants = 2000): Promise<WeightResult> {
  const kept = await keptInstallations({
    serviceUrl,
    installations: {
      summaryOf: async (id) => connectedInstallation(id),
      paymentKeyOf: async (id) => `key-${id}`,
    },
    max: tenants,
  });
  const use = async (id: InstallationId) => {
    await kept.request(connectedInstallation(id));
    await kept.check(id);
  };
  // Every module and shared object exists before the first reading.
  const warmUp = installationId('T0WARMUP');
  await use(warmUp);
  kept.tenants.forget(warmUp);
  const before = heap();
  for (let i = 0; i < tenants; i += 1) await use(installationId(`T${i}`));
  const after = heap();
  // The installations are kept now: what follows is the cost of using one, not of building it.
  const cpu = async (work: (id: InstallationId) => Promise<unknown>) => {
    const started = process.cpuUsage();
    for (let i = 0; i < tenants; i += 1) await work(installationId(`T${i}`));
    const { user, system } = process.cpuUsage(started);
    return round((user + system) / tenants, 1);
  };
  const { size } = kept.tenants;
  const result = {
    tenants: size,
    perTenantKb: round((after - before) / size / 1024, 1),
    totalMb: round((after - before) / 2 ** 20, 1),
    requestUs: await cpu((id) => kept.request(connectedInstallation(id))),
    checkUs: await cpu((id) => kept.check(id)),
  };
  await kept.close();
  return result;
}
