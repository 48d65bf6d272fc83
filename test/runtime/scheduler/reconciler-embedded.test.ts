import { describe } from 'node:test';
import { embeddedBackend, useBackend } from '../../coord/backends.js';
import { reconcilerScenarios } from './reconciler-scenarios.js';

describe('scheduler reconciler: embedded backend', () => {
  const { backend, open } = useBackend(async () => embeddedBackend());
  reconcilerScenarios(backend, open);
});
