import { zookeeperBackend } from '../backends.js';
import { controlChannelSuite } from './control-channel-suite.js';

controlChannelSuite('zookeeper (3-server ensemble)', () => zookeeperBackend());
