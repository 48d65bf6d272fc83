import { embeddedBackend } from '../backends.js';
import { controlChannelSuite } from './control-channel-suite.js';

controlChannelSuite('embedded', async () => embeddedBackend());
