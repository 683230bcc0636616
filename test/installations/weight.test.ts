import { describe, expect, it } from 'vitest';
import { weightScenario } from '../../bench/weight.js';

describe('an installation kept in memory (many workspaces)', () => {
  it('weighs its row, not its own copy of the handlers, watches and feed: under 12 KB of heap each once served', async () => {
    // bench/weight.ts, small: 200 installations, each served a request and a check. Run here
    // (no tsx, whose keepNames gives every closure a name property of its own) it measured about
    // 5 KB each; a part built whole, as before issue 39, 24 KB, and one that kept what its
    // request and check made, 19 KB.
    const { tenants, perTenantKb } = await weightScenario('http://127.0.0.1:9', 200);
    expect(tenants).toBe(200);
    expect(perTenantKb).toBeLessThan(12);
  });
});
