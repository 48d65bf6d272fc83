/**
 * The sandbox process: runs tasks in isolated-vm isolates with a memory limit and a time limit.
 * Started by the sandbox pool with `--no-node-snapshot` (isolated-vm needs it) and
 * `--disallow-code-generation-from-strings` (no eval or Function in any isolate). An isolate that
 * runs out of memory may take this process down; the pool replaces it. With `each`, one message per
 * task outcome, so the pool knows which task was running when the process died; without, the
 * outcomes of a request travel together (one message per ~1 MB), which costs less than a message
 * per task (about 0.08 ms each) but leaves the running task unknown to the pool.
 */
import ivm from 'isolated-vm';
import { runtimeBundle } from './runtime-bundle.js';
import { PACKAGES_GLOBAL, type Code } from './graph-format.js';
import { TASK_SCRIPT } from './sandbox-runtime.js';
import type { HostRequest, HostReply } from './sandbox-pool.js';

let isolate: ivm.Isolate | undefined;
let isolateMemoryMb = 0;
let loaded: { key: string; context: ivm.Context; run: ivm.Reference<(i: number) => string> } | undefined;
let runtimeScript: ivm.Script | undefined;

function send(reply: HostReply): void {
  process.send!(reply);
}

/** The last batch's graph, kept to rebuild its context after an isolate was disposed (memory limit). */
let source: { key: string; graph: string; codes: Code[]; packages: string[] } | undefined;
/** The blobs this process holds, as the pool decided (held-blobs.ts). */
const blobs = new Map<string, Uint8Array>();

function load(key: string, given: string | undefined, givenCodes: Code[] | undefined, givenPackages: string[] | undefined, memoryMb: number) {
  if (given !== undefined && givenCodes !== undefined) source = { key, graph: given, codes: givenCodes, packages: givenPackages ?? [] };
  if (isolate && !isolate.isDisposed && isolateMemoryMb !== memoryMb) isolate.dispose(); // another batch, another limit
  if (!isolate || isolate.isDisposed) {
    isolate = new ivm.Isolate({ memoryLimit: memoryMb });
    isolateMemoryMb = memoryMb;
    runtimeScript = undefined;
    loaded = undefined;
  }
  if (loaded?.key === key) return loaded;
  if (source?.key !== key) throw new Error(`batch ${key} was not sent to this sandbox process`);
  const { graph, codes, packages } = source;
  loaded?.context.release();
  const context = isolate.createContextSync();
  runtimeScript ??= isolate.compileScriptSync(runtimeBundle(), { filename: 'tidepool-sandbox-runtime.js' });
  runtimeScript.runSync(context);
  // Package bundles are plain scripts: evaluated once per batch in its context, with no module loader and no I/O.
  context.evalSync(`globalThis.${PACKAGES_GLOBAL} = [];`);
  packages.forEach((code, i) => isolate!.compileScriptSync(`globalThis.${PACKAGES_GLOBAL}[${i}] = ${code};`, { filename: `tidepool-package-${i}.js` }).runSync(context));
  const text = context.evalClosureSync('return __tidepoolRuntime.factoriesScript(JSON.parse($0)).text', [JSON.stringify(codes)]) as string;
  const factories = isolate.compileScriptSync(`globalThis.__tp_factories = ${text};`, { filename: TASK_SCRIPT });
  factories.runSync(context);
  // The blobs the graph names, copied into the isolate once per batch.
  const named = Object.keys((JSON.parse(graph) as { blobs?: Record<string, number> }).blobs ?? {});
  const held = Object.fromEntries(named.map((h) => [h, blobs.get(h)]).filter(([, b]) => b !== undefined));
  context.evalClosureSync('const blobs = $1; globalThis.__tp_rt = new __tidepoolRuntime.SandboxRuntime($0, __tp_factories, globalThis, (h) => blobs[h]);', [graph, held], { arguments: { copy: true } });
  const run = context.evalSync('(i) => __tp_rt.run(i)', { reference: true }) as ivm.Reference<(i: number) => string>;
  loaded = { key, context, run };
  return loaded;
}

/** Outcomes buffered beyond this many characters are sent at once. */
const FLUSH_CHARS = 1 << 20;

function serve(msg: HostRequest): void {
  for (const hash of msg.dropBlobs ?? []) blobs.delete(hash);
  for (const [hash, bytes] of msg.blobs ?? []) blobs.set(hash, bytes);
  let target: NonNullable<typeof loaded>;
  try {
    target = load(msg.key, msg.graph, msg.codes, msg.packages, msg.memoryMb);
  } catch (e) {
    const outcome = JSON.stringify({ ok: false, err: { name: 'SandboxError', message: `the sandbox could not load the batch: ${(e as Error).message}` } });
    send({ type: 'done', outcomes: msg.indexes.map((index) => [index, outcome]) });
    return;
  }
  let buffered: [number, string][] = [];
  let bufferedChars = 0;
  for (const index of msg.indexes) {
    const t0 = Date.now();
    let outcome: string;
    try {
      outcome = target.run.applySync(undefined, [index], { timeout: msg.timeoutMs });
    } catch (e) {
      const message = (e as Error).message;
      const name = /timed out/i.test(message) ? 'TimeoutError' : /memory limit|disposed/i.test(message) ? 'MemoryLimitError' : 'SandboxError';
      const detail = name === 'TimeoutError' ? `the task ran longer than its limit of ${msg.timeoutMs} ms` : name === 'MemoryLimitError' ? `the task exceeded its memory limit of ${msg.memoryMb} MB` : message;
      outcome = JSON.stringify({ ok: false, err: { name, message: detail }, ms: Date.now() - t0 });
      if (isolate?.isDisposed) loaded = undefined;
      if (loaded === undefined) {
        try {
          target = load(msg.key, msg.graph, msg.codes, msg.packages, msg.memoryMb);
        } catch {
          process.exit(70); // cannot go on: the pool replaces this process
        }
      }
    }
    buffered.push([index, outcome]);
    bufferedChars += outcome.length;
    if (msg.each || bufferedChars >= FLUSH_CHARS) {
      send({ type: 'outcomes', outcomes: buffered });
      buffered = [];
      bufferedChars = 0;
    }
  }
  send({ type: 'done', outcomes: buffered });
}

process.on('message', (msg: HostRequest) => {
  if (msg.type === 'run') serve(msg);
});
send({ type: 'ready' });
