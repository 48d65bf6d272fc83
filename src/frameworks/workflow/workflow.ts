import type { Catalogs } from './pegasus-catalogs.js';

/**
 * A compiled workflow: tasks and files numbered densely (a million tasks are arrays, not objects
 * keyed by string), each task's dependencies the union of the explicit edges of its file and the
 * edges implied by files (the task that writes F precedes every task that reads F).
 */

/** A real executable: run in a per-task directory holding its inputs; its outputs are collected from there. */
export interface CommandSpec {
  program: string;
  args: string[];
  /** Redirects (Pegasus `<stdin>`, `<stdout>`, `<stderr>`): files of the task read as stdin, written from stdout and stderr. */
  stdin?: string;
  stdout?: string;
  stderr?: string;
}

/** The logical transformation a Pegasus job names (resolved to an executable through the transformation catalog). */
export interface TransformationRef {
  name: string;
  namespace?: string;
  version?: string;
}

/** A JavaScript function task, loaded by module reference on whichever node runs it (weak migration). */
export interface FunctionRef {
  module: string;
  export: string;
}

/** What a task may add to the running workflow (workflow-growth.ts): a function task or a command task, its files by name, parents by id. */
export interface AddedTask {
  id: string;
  /** A function (its module defaults to the adding task's module), or a command (argv, or a spec with redirects). */
  fn?: FunctionRef | { module?: string; export: string };
  command?: string[] | CommandSpec;
  args?: string[];
  inputs?: string[];
  outputs?: string[];
  /** Tasks added with this one, or the adding task itself. */
  parents?: string[];
  category?: string;
  runtime?: number;
  cores?: number;
  memoryMb?: number;
  timeoutSeconds?: number;
}

/**
 * What a function task's export receives and returns: the bytes of its inputs by name, and the
 * bytes of its outputs by name (every declared output must be returned). `task.addTasks` adds tasks
 * to the running workflow when this attempt succeeds (workflow-growth.ts).
 */
export type WorkflowFunction = (inputs: Record<string, Uint8Array>, task: FunctionTaskContext) => Promise<Record<string, Uint8Array | string>> | Record<string, Uint8Array | string>;

export interface FunctionTaskContext {
  id: string;
  args: string[];
  addTasks(tasks: AddedTask[]): void;
}

export interface WorkflowTask {
  /** Unique id within the workflow. */
  id: string;
  name: string;
  /** The stage or transformation (mProject, mDiffFit, …), for per-stage figures. */
  category: string;
  /** Recorded runtime in seconds (0 when the file has none; a few generated files record small negatives, kept). */
  runtime: number;
  /** File numbers read and written. */
  inputs: number[];
  outputs: number[];
  /** Task numbers this task waits for (explicit ∪ file-implied), ascending, no duplicates. */
  parents: number[];
  command?: CommandSpec;
  fn?: FunctionRef;
  /** Arguments of a function task (given to it as `task.args`). */
  args?: string[];
  /** Cores and memory (MiB) a command task needs while it runs (default 1 core, no memory counted). */
  cores?: number;
  memoryMb?: number;
  /** A command task running longer is killed (its process group) and the attempt fails. */
  timeoutSeconds?: number;
  /** The transformation a Pegasus job names (its command's program until a catalog says otherwise). */
  transformation?: TransformationRef;
}

export interface WorkflowFile {
  /** Unique key: the name, or `name@taskId` for one writer's copy of a name several tasks write. */
  key: string;
  /** The file name tasks see in their working directory. */
  name: string;
  /** Size in bytes as recorded (0 when unknown). */
  size: number;
  /** The task that writes it, or -1 for a workflow input (read from the shared directory). */
  producer: number;
  /** Tasks that read it. */
  consumers: number[];
  /**
   * A completion marker, not a real file: it stands for explicit edges that no file implies, so that
   * readiness stays data-driven (the children wait for it as for any input). Never written anywhere.
   */
  marker?: boolean;
  /** A workflow input the replica catalog places outside the shared directory: its absolute path. */
  location?: string;
}

export interface WorkflowCounts {
  tasks: number;
  /** Distinct (parent, child) pairs as the file states them. */
  explicitEdges: number;
  /** Distinct (writer, reader) pairs implied by files. */
  fileEdges: number;
  /** The union: the dependencies that are enforced. */
  edges: number;
  /** Distinct file names (a name written by several tasks counts once). */
  files: number;
  totalRuntime: number;
  criticalPath: number;
  /** Longest chain of tasks (levels). */
  depth: number;
}

export interface Workflow {
  name: string;
  /** 'Pegasus DAX 2.1', 'Pegasus DAX 3.6', 'Pegasus YAML 5.0', 'WfFormat 1.5', 'WfFormat 1.4', 'code'. */
  format: string;
  source: string;
  tasks: WorkflowTask[];
  files: WorkflowFile[];
  /** Task numbers in an order where every parent comes before its children. */
  order: Int32Array;
  counts: WorkflowCounts;
  /** Quirks met and how they were resolved (unreliable jobCount, a name written by several tasks, …). */
  warnings: string[];
  /** Task number by id, or -1. */
  taskIndex(id: string): number;
  /** Names the content it was loaded from (its files' stamps), when loaded through its compiled copy (compiled-workflow.ts). */
  contentKey?: string;
  /** Each task's line in the source file by task number (0: unknown), as the builder kept them (what `lineOf` reads). */
  taskLines?: Int32Array;
  /** The line of the source file where a task is declared, when the loader knows it (for errors found after loading). */
  lineOf?(taskId: string): number | undefined;
  /** Files its sub-workflow jobs were read from (absolute paths), when it has any. */
  includes?: string[];
  /** Catalogs the workflow file embeds (Pegasus DAX 3 executables and files, YAML catalogs). */
  catalogs?: Catalogs;
}

/** Children of every task (the reverse of `parents`), built once when a scheduler needs them. */
export function childrenOf(workflow: Workflow): number[][] {
  const children: number[][] = workflow.tasks.map(() => []);
  workflow.tasks.forEach((task, t) => {
    for (const p of task.parents) children[p]!.push(t);
  });
  return children;
}

/** Final outputs: files some task writes and no task reads (they go to the shared directory). */
export function finalOutputs(workflow: Workflow): number[] {
  const out: number[] = [];
  workflow.files.forEach((f, i) => {
    if (f.producer >= 0 && f.consumers.length === 0 && !f.marker) out.push(i);
  });
  return out;
}

/** Workflow inputs: files no task writes (read from the shared directory). */
export function workflowInputs(workflow: Workflow): number[] {
  const out: number[] = [];
  workflow.files.forEach((f, i) => {
    if (f.producer < 0) out.push(i);
  });
  return out;
}

/** A copy that can grow (workflow-growth.ts) without changing the original: tasks, files and their lists copied. */
export function copyWorkflow(workflow: Workflow): Workflow {
  return {
    ...workflow,
    tasks: workflow.tasks.map((t) => ({ ...t, inputs: [...t.inputs], outputs: [...t.outputs], parents: [...t.parents] })),
    files: workflow.files.map((f) => ({ ...f, consumers: [...f.consumers] })),
    order: workflow.order.slice(),
    counts: { ...workflow.counts },
  };
}
