import { contractSuite } from './contract.js';
import { zookeeperBackend } from './backends.js';

contractSuite('zookeeper (3-server ensemble)', () => zookeeperBackend());
