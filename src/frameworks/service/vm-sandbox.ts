/**
 * A sandbox on `node:vm`, for `Distribution.local()`: the same runtime as in an isolate, in a
 * context without host objects and with code generation from strings disabled. It isolates the
 * task's globals, not the host's memory or CPU (node:vm is not a security boundary): local tasks
 * are the program's own code on its own machine.
 */
import vm from 'node:vm';
import { runtimeBundle } from './runtime-bundle.js';
import { PACKAGES_GLOBAL, type Code } from './graph-format.js';
import { TASK_SCRIPT } from './sandbox-runtime.js';

export class VmSandbox {
  private readonly context: vm.Context;
  private readonly runTask: vm.Script;

  /** `blobs`: the bytes of the blobs the graph names (bulk data and shared values), by hash. */
  constructor(graphJson: string, codes: Code[], private readonly timeoutMs = 0, packages: string[] = [], blobs: ReadonlyMap<string, Uint8Array> = new Map()) {
    this.context = vm.createContext({}, { codeGeneration: { strings: false, wasm: false } });
    new vm.Script(runtimeBundle(), { filename: 'tidepool-sandbox-runtime.js' }).runInContext(this.context);
    new vm.Script(`globalThis.${PACKAGES_GLOBAL} = [];`).runInContext(this.context);
    packages.forEach((code, i) => new vm.Script(`globalThis.${PACKAGES_GLOBAL}[${i}] = ${code};`, { filename: `tidepool-package-${i}.js` }).runInContext(this.context));
    const rt = this.context.__tidepoolRuntime as { factoriesScript(codes: Code[]): { text: string } };
    const factories = new vm.Script(rt.factoriesScript(codes).text, { filename: TASK_SCRIPT }).runInContext(this.context) as unknown;
    this.context.__tp_graph = graphJson;
    this.context.__tp_factories = factories;
    this.context.__tp_blobs = (hash: string) => blobs.get(hash);
    new vm.Script('globalThis.__tp_rt = new __tidepoolRuntime.SandboxRuntime(__tp_graph, __tp_factories, globalThis, __tp_blobs); delete globalThis.__tp_graph; delete globalThis.__tp_blobs;').runInContext(this.context);
    this.runTask = new vm.Script('__tp_rt.run(__tp_i)', { filename: 'tidepool-run.js' });
  }

  /** Runs task `i`; returns its outcome as JSON (an exception of the task is part of the outcome). */
  run(i: number): string {
    this.context.__tp_i = i;
    return this.runTask.runInContext(this.context, this.timeoutMs > 0 ? { timeout: this.timeoutMs } : {}) as string;
  }
}
