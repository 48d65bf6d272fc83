/**
 * Entry of the script bundled into every sandbox: exposes the sandbox runtime on the sandbox's
 * global object and closes the ways to compile code from strings that remain reachable from any
 * function (`constructor.constructor`, `eval`): captured code is compiled by the host, never by tasks.
 */
import { SandboxRuntime, factoriesScript } from './sandbox-runtime.js';

const g = globalThis as Record<string, unknown>;
g.__tidepoolRuntime = { SandboxRuntime, factoriesScript };
const refuse = function () {
  throw new EvalError('dynamic code (Function, eval) is not allowed in a distributed task');
};
for (const proto of [
  Function.prototype,
  Object.getPrototypeOf(async function () {}),
  Object.getPrototypeOf(function* () {}),
  Object.getPrototypeOf(async function* () {}),
]) Object.defineProperty(proto, 'constructor', { value: refuse, writable: false, configurable: false });
delete g.eval;
