/**
 * Builds a Workflow from tasks as loaders (or application code) declare them: tasks in any order,
 * parents named by id or by name, files named by string. `build()` numbers everything, derives the
 * file-implied edges, resolves names several tasks write, refuses unknown parents and cycles with
 * the offending task and its line, and computes the counts and the critical path.
 */
import { computeOrder } from './workflow-graph.js';
import type { CommandSpec, FunctionRef, Workflow, WorkflowFile, WorkflowTask } from './workflow.js';
import { WorkflowError, type SourceInfo } from './workflow-error.js';

export interface FileUse {
  name: string;
  size?: number;
}

export interface TaskDecl {
  id: string;
  name?: string;
  category?: string;
  /** Seconds. */
  runtime?: number;
  inputs?: (string | FileUse)[];
  outputs?: (string | FileUse)[];
  /** Explicit parents by task id (or, as WfCommons 1.4 writes them, by task name). */
  parents?: string[];
  command?: CommandSpec;
  fn?: FunctionRef;
  args?: string[];
  /** Line in the source file, when the loader knows it. */
  line?: number;
}

interface Pending {
  decl: TaskDecl;
  inputs: string[];
  outputs: string[];
  parents: string[];
  inputsNumbered?: number[];
  outputsNumbered?: number[];
}

/** A workflow built in code, as data (see WorkflowBuilder.toSource). */
export interface WorkflowSource {
  name: string;
  tasks: TaskDecl[];
  sizes: [string, number][];
  dependencies: [string, string][];
}

export class WorkflowBuilder {
  private readonly pending: Pending[] = [];
  private readonly sizes = new Map<string, number>();
  private readonly outputSizes = new Map<string, number>();
  private readonly extraParents: [string, string][] = [];
  readonly warnings: string[] = [];

  constructor(
    readonly name: string,
    private readonly source: SourceInfo = { file: '<code>' },
    private readonly format = 'code',
  ) {}

  /** Declares the size of a file (workflow inputs need one to be replayed). */
  file(name: string, size: number): this {
    this.sizes.set(name, size);
    return this;
  }

  /** A task running a real executable: `argv[0]` is the program. */
  command(id: string, argv: string[], io: { inputs?: (string | FileUse)[]; outputs?: (string | FileUse)[]; runtime?: number; parents?: string[] } = {}): this {
    if (argv.length === 0) throw this.error(id, 'a command task needs a program');
    return this.task({ id, command: { program: argv[0]!, args: argv.slice(1) }, ...io });
  }

  /** A task running an exported JavaScript function (see WorkflowFunction). */
  fn(id: string, ref: FunctionRef, io: { inputs?: (string | FileUse)[]; outputs?: (string | FileUse)[]; args?: string[]; runtime?: number; parents?: string[] } = {}): this {
    return this.task({ id, fn: ref, ...io });
  }

  task(decl: TaskDecl): this {
    if (typeof decl.id !== 'string' || decl.id === '') throw this.error(undefined, 'a task needs a non-empty string id', decl.line);
    if (decl.runtime !== undefined && !Number.isFinite(decl.runtime)) {
      throw this.error(decl.id, `runtime must be a number of seconds, got ${String(decl.runtime)}`, decl.line);
    }
    const names = (uses: (string | FileUse)[] | undefined, into: Map<string, number>) =>
      (uses ?? []).map((u) => {
        if (typeof u === 'string') return u;
        if (u.size !== undefined) {
          if (!(Number.isFinite(u.size) && u.size >= 0)) throw this.error(decl.id, `file ${u.name}: size must be a non-negative number of bytes`, decl.line);
          into.set(u.name, Math.max(into.get(u.name) ?? 0, u.size));
        }
        return u.name;
      });
    this.pending.push({ decl, inputs: names(decl.inputs, this.sizes), outputs: names(decl.outputs, this.outputSizes), parents: decl.parents ?? [] });
    return this;
  }

  /** An explicit edge declared apart from the child (DAX `<child><parent/></child>`, YAML jobDependencies). */
  dependsOn(child: string, parent: string): this {
    this.extraParents.push([child, parent]);
    return this;
  }

  /** The declarations, as plain data: a job carries them to every member, which builds the same workflow. */
  toSource(): WorkflowSource {
    return { name: this.name, tasks: this.pending.map((p) => p.decl), sizes: [...this.sizes], dependencies: this.extraParents };
  }

  static fromSource(source: WorkflowSource): WorkflowBuilder {
    const b = new WorkflowBuilder(source.name);
    for (const [name, size] of source.sizes) b.file(name, size);
    for (const decl of source.tasks) b.task(decl);
    for (const [child, parent] of source.dependencies) b.dependsOn(child, parent);
    return b;
  }

  build(): Workflow {
    const n = this.pending.length;
    if (n === 0) throw this.error(undefined, 'the workflow has no tasks');
    const byId = new Map<string, number>();
    const byName = new Map<string, number>();
    this.pending.forEach((p, t) => {
      if (byId.has(p.decl.id)) throw this.error(p.decl.id, `duplicate task id (first declared at task ${byId.get(p.decl.id)! + 1})`, p.decl.line);
      byId.set(p.decl.id, t);
      const name = p.decl.name ?? p.decl.id;
      byName.set(name, byName.has(name) ? -1 : t); // a name used twice cannot name a parent
    });
    const resolve = (ref: string, child: Pending) => {
      const t = byId.get(ref) ?? byName.get(ref);
      if (t === undefined || t < 0) throw this.error(child.decl.id, `parent "${ref}" is not a task of this workflow`, child.decl.line);
      return t;
    };
    const explicit: number[][] = this.pending.map((p) => p.parents.map((ref) => resolve(ref, p)));
    for (const [childId, parentRef] of this.extraParents) {
      const c = byId.get(childId) ?? byName.get(childId);
      if (c === undefined || c < 0) throw this.error(childId, 'a dependency names a child that is not a task of this workflow');
      explicit[c]!.push(resolve(parentRef, this.pending[c]!));
    }
    const { files, fileNames } = this.numberFiles(explicit);
    const tasks: WorkflowTask[] = new Array(n);
    let explicitEdges = 0;
    let fileEdges = 0;
    // Stamps instead of sets: seen[q] === t means q is already a parent of t (a million tasks, no garbage).
    const seenExplicit = new Int32Array(n).fill(-1);
    const seenFile = new Int32Array(n).fill(-1);
    let edges = 0;
    this.pending.forEach((p, t) => {
      const parents: number[] = [];
      for (const q of explicit[t]!) {
        if (seenExplicit[q] === t) continue;
        seenExplicit[q] = t;
        parents.push(q);
      }
      explicitEdges += parents.length;
      for (const f of p.inputsNumbered!) {
        const q = files[f]!.producer;
        if (q < 0 || q === t || seenFile[q] === t) continue;
        seenFile[q] = t;
        fileEdges++;
        if (seenExplicit[q] !== t) parents.push(q);
      }
      if (parents.length > 1) parents.sort((x, y) => x - y);
      edges += parents.length;
      const d = p.decl;
      tasks[t] = {
        id: d.id, name: d.name ?? d.id, category: d.category ?? d.name ?? d.id, runtime: d.runtime ?? 0,
        inputs: p.inputsNumbered!, outputs: p.outputsNumbered!, parents,
        ...(d.command ? { command: d.command } : {}), ...(d.fn ? { fn: d.fn } : {}), ...(d.args ? { args: d.args } : {}),
      };
    });
    this.addMarkers(tasks, files);
    const graph = computeOrder(tasks, (cycle) => {
      const first = this.pending[cycle[0]!]!.decl;
      return this.error(first.id, `dependency cycle: ${[...cycle, cycle[0]!].map((t) => tasks[t]!.id).join(' -> ')}`, first.line);
    });
    return {
      name: this.name, format: this.format, source: this.source.file, tasks, files, order: graph.order,
      counts: { tasks: n, explicitEdges, fileEdges, edges, files: fileNames, totalRuntime: graph.totalRuntime, criticalPath: graph.criticalPath, depth: graph.depth },
      warnings: this.warnings,
      taskIndex: (id) => byId.get(id) ?? -1,
    };
  }

  /**
   * Explicit edges no file implies get a marker file (one per such parent, read by each such child),
   * so that a worker learns a parent finished exactly as it learns a file exists.
   */
  private addMarkers(tasks: WorkflowTask[], files: WorkflowFile[]): void {
    const markerOf = new Map<number, number>();
    const stamp = new Int32Array(tasks.length).fill(-1); // stamp[p] === t: p writes a file t reads
    tasks.forEach((task, t) => {
      for (const f of task.inputs) if (files[f]!.producer >= 0) stamp[files[f]!.producer] = t;
      for (const p of task.parents) {
        if (stamp[p] === t) continue;
        let m = markerOf.get(p);
        if (m === undefined) {
          m = files.length;
          markerOf.set(p, m);
          files.push({ key: `#done:${tasks[p]!.id}`, name: `#done:${tasks[p]!.id}`, size: 0, producer: p, consumers: [], marker: true });
          tasks[p]!.outputs.push(m);
        }
        files[m]!.consumers.push(t);
        task.inputs.push(m);
      }
    });
  }

  /**
   * Numbers files and sets producers and consumers. A name written by several tasks (the 2008
   * Pegasus generator reuses names such as fit.txt) becomes one copy per writer; a reader reads
   * the copies of the writers among its explicit parents, or every copy when none is its parent.
   */
  private numberFiles(explicit: number[][]): { files: WorkflowFile[]; fileNames: number } {
    const writers = new Map<string, number[]>();
    this.pending.forEach((p, t) => {
      for (const name of p.outputs) {
        const w = writers.get(name);
        if (w === undefined) writers.set(name, [t]);
        else if (w[w.length - 1] !== t) w.push(t);
      }
    });
    const files: WorkflowFile[] = [];
    const index = new Map<string, number>();
    const add = (key: string, name: string, producer: number) => {
      const size = producer >= 0 ? this.outputSizes.get(name) ?? this.sizes.get(name) ?? 0 : this.sizes.get(name) ?? this.outputSizes.get(name) ?? 0;
      index.set(key, files.length);
      files.push({ key, name, size, producer, consumers: [] });
      return files.length - 1;
    };
    let multi = 0;
    for (const [name, w] of writers) {
      if (w.length === 1) add(name, name, w[0]!);
      else {
        multi++;
        for (const t of w) add(`${name}@${this.pending[t]!.decl.id}`, name, t);
      }
    }
    let copies = 0;
    for (const w of writers.values()) if (w.length > 1) copies += w.length;
    this.pending.forEach((p, t) => {
      const outs = p.outputs.map((name) => index.get(name) ?? index.get(`${name}@${p.decl.id}`)!);
      p.outputsNumbered = outs.length > 1 ? [...new Set(outs)] : outs;
      const inputs: number[] = [];
      for (const name of p.inputs) {
        const w = writers.get(name);
        if (w === undefined) inputs.push(index.get(name) ?? add(name, name, -1));
        else if (w.length === 1) { if (w[0] !== t) inputs.push(index.get(name)!); }
        else {
          const mine = w.filter((q) => explicit[t]!.includes(q));
          for (const q of mine.length > 0 ? mine : w.filter((q) => q !== t)) inputs.push(index.get(`${name}@${this.pending[q]!.decl.id}`)!);
        }
      }
      p.inputsNumbered = inputs.length > 1 ? [...new Set(inputs)] : inputs;
      for (const f of p.inputsNumbered) files[f]!.consumers.push(t);
    });
    if (multi > 0) this.warnings.push(`${multi} file name(s) are written by several tasks; each writer's copy is kept apart and read by that writer's explicit children`);
    return { files, fileNames: files.length - copies + multi };
  }

  private error(taskId: string | undefined, detail: string, line?: number): WorkflowError {
    const at = line ?? (taskId === undefined ? undefined : this.source.lineOf?.(taskId));
    return new WorkflowError(this.source.file, at, taskId === undefined ? detail : `task ${taskId}: ${detail}`);
  }
}
