import { describe } from 'node:test';
import { useBackend, type Backend } from '../backends.js';
import { membershipAndElectionTests } from './membership-election.js';
import { variablesAndTerminationTests } from './variables-termination.js';

/** Every recipe, on one backend. */
export function recipeSuite(name: string, makeBackend: () => Promise<Backend>): void {
  describe(`coordination recipes: ${name}`, () => {
    const { backend, open } = useBackend(makeBackend);
    membershipAndElectionTests(backend, open);
    variablesAndTerminationTests(open);
  });
}
