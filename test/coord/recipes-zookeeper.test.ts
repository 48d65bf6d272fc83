import { zookeeperBackend } from './backends.js';
import { recipeSuite } from './recipes/suite.js';

recipeSuite('zookeeper (3-server ensemble)', () => zookeeperBackend());
