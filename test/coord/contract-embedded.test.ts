import { contractSuite } from './contract.js';
import { embeddedBackend } from './backends.js';

contractSuite('embedded', async () => embeddedBackend());
