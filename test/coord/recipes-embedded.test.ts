import { embeddedBackend } from './backends.js';
import { recipeSuite } from './recipes/suite.js';

recipeSuite('embedded', async () => embeddedBackend());
