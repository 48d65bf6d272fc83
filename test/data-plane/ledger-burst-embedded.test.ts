import { embeddedBackend } from '../coord/backends.js';
import { ledgerBurstSuite } from './ledger-burst.js';

ledgerBurstSuite('embedded', async () => embeddedBackend());
