import { zookeeperBackend } from '../coord/backends.js';
import { ledgerBurstSuite } from './ledger-burst.js';

ledgerBurstSuite('ZooKeeper (3-server ensemble)', () => zookeeperBackend());
