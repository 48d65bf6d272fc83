import { after, before, describe } from 'node:test';
import type { CoordClient } from '../../../src/coord/types.js';
import type { Backend } from '../backends.js';
import { membershipAndElectionTests } from './membership-election.js';
import { variablesAndTerminationTests } from './variables-termination.js';

/** Every recipe, on one backend. */
export function recipeSuite(name: string, makeBackend: () => Promise<Backend>): void {
  describe(`coordination recipes: ${name}`, () => {
    let backend: Backend;
    const sessions: CoordClient[] = [];
    const open = async (sessionTimeoutMs?: number) => {
      const c = await backend.connect(sessionTimeoutMs ? { sessionTimeoutMs } : undefined);
      sessions.push(c);
      return c;
    };
    before(async () => {
      backend = await makeBackend();
    });
    after(async () => {
      await Promise.all(sessions.map((c) => c.close().catch(() => undefined)));
      await backend.close();
    });
    membershipAndElectionTests(() => backend, open);
    variablesAndTerminationTests(open);
  });
}
