/** Entry of the script bundled into every sandbox: exposes the sandbox runtime on the sandbox's global object. */
import { SandboxRuntime, factoriesScript } from './sandbox-runtime.js';

(globalThis as Record<string, unknown>).__tidepoolRuntime = { SandboxRuntime, factoriesScript };
