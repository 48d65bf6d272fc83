import { describe } from 'node:test';
import { useBackend, zookeeperBackend } from '../../coord/backends.js';
import { reconcilerScenarios } from './reconciler-scenarios.js';

/** The same scenarios on a real 3-server ZooKeeper ensemble (sessions through their own proxies). */
describe('scheduler reconciler: zookeeper (3-server ensemble)', () => {
  const { backend, open } = useBackend(() => zookeeperBackend());
  reconcilerScenarios(backend, open);
});
