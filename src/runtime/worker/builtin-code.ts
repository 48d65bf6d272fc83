/**
 * The code that ships with tidepool, by stable `builtin:` names. A job names built-in kinds, task
 * types and applications so, never by a file URL of the submitter's installation: every node (and
 * each of its workers) resolves the name in its own installation, which may be elsewhere, on another
 * machine, from another build (sources under tsx, or dist/). A second copy of tidepool's modules in
 * a node would also mix its classes with the node's.
 *
 * This table is data (module paths relative to this package), not imports: nothing here is loaded
 * until a job asks for it.
 */
/** Sources run under tsx (.ts), the built package as JavaScript (.js). */
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/** `builtin:` name → path below the package's src/ (sources) or dist/src/ (built), without extension. */
const BUILTIN_PATHS: Readonly<Record<string, string>> = {
  // Job kinds (registered for loading in kinds/kind-registry.ts; the task pool by pool/task-pool-ref.ts). Listed here for code admission.
  'builtin:iterative': 'frameworks/iterative/iterative-kind',
  'builtin:malleable': 'frameworks/malleable/malleable-kind',
  'builtin:workflow': 'frameworks/workflow/workflow-kind',
  'builtin:service-kind': 'frameworks/service/service-kind',
  // Task types of the search framework (`tidepool solve`).
  'builtin:tsp': 'frameworks/search/tsp/tsp',
  'builtin:nqueens': 'frameworks/search/nqueens/nqueens',
  'builtin:clique': 'frameworks/search/clique/max-clique',
  'builtin:knapsack': 'frameworks/search/knapsack/knapsack',
  // Iterative applications (`tidepool iterate`).
  'builtin:slab': 'frameworks/iterative/apps/slab',
  'builtin:option': 'frameworks/iterative/apps/option',
  // Malleable applications (`tidepool malleable run`).
  'builtin:stencil': 'frameworks/malleable/apps/stencil2d',
  'builtin:wave': 'frameworks/malleable/apps/wave2d',
  'builtin:leanmd': 'frameworks/malleable/apps/leanmd',
  'builtin:lulesh': 'frameworks/malleable/apps/lulesh',
  // The task types workflows and the service run.
  'builtin:workflow-task': 'frameworks/workflow/replay-task',
  'builtin:service-task': 'frameworks/service/service-task',
};

/** The task pool, the kind built into the runtime itself (kinds/task-pool-kind.ts): no module to load. */
export const TASK_POOL_MODULE = 'builtin:task-pool';

/** The names `builtin:` references may use. */
export function builtinNames(): string[] {
  return [TASK_POOL_MODULE, ...Object.keys(BUILTIN_PATHS)];
}

/** Whether `specifier` is a `builtin:` name (known or not). */
export function isBuiltinName(specifier: string): boolean {
  return specifier.startsWith('builtin:');
}

/** Whether `name` is a built-in this installation has. */
export function isKnownBuiltin(name: string): boolean {
  return name === TASK_POOL_MODULE || BUILTIN_PATHS[name] !== undefined;
}

/**
 * The file: URL of a built-in module in this installation, or undefined for an unknown name.
 * (`builtin:task-pool` has no entry: pool/task-pool-ref.ts registers it.)
 */
export function builtinModule(name: string): string | undefined {
  const rel = BUILTIN_PATHS[name];
  return rel === undefined ? undefined : new URL(`../../${rel}${EXT}`, import.meta.url).href;
}

/** What to import for a module a job names: a `builtin:` name becomes this installation's file; anything else stays. */
export function resolveModule(specifier: string): string {
  if (!isBuiltinName(specifier)) return specifier;
  const url = builtinModule(specifier);
  if (url === undefined) throw new Error(`unknown built-in module "${specifier}" (known: ${builtinNames().join(', ')})`);
  return url;
}
