/**
 * Builds a Workflow from tasks as loaders (or application code) declare them: tasks in any order,
 * parents named by id or by name, files named by string. `build()` numbers everything, derives the
 * file-implied edges, resolves names several tasks write, refuses unknown parents and cycles with
 * the offending task and its line, and computes the counts and the critical path.
 */
import { emptyCatalogs, mergeCatalogs, type Catalogs } from './pegasus-catalogs.js';
import { computeOrder } from './workflow-graph.js';
import type { CommandSpec, FunctionRef, TransformationRef, Workflow, WorkflowFile, WorkflowTask } from './workflow.js';
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
  transformation?: TransformationRef;
  /** Cores and memory (MiB) a command task needs while it runs; a timeout in seconds. */
  cores?: number;
  memoryMb?: number;
  timeoutSeconds?: number;
  /** Line in the source file, when the loader knows it. */
  line?: number;
}

/**
 * How a loader reads the file a sub-workflow job names (`ref` as written, from the line of the job):
 * the loaded workflow and the file's absolute path. Given by load-workflow.ts, which reads any format.
 */
export type SubworkflowReader = (ref: string, line: number, replicas?: Map<string, string>) => { workflow: Workflow; path: string };

/** What a task declared in code may say besides its id and what it runs. */
export type TaskOptions = Pick<TaskDecl, 'inputs' | 'outputs' | 'runtime' | 'parents' | 'cores' | 'memoryMb' | 'timeoutSeconds'>;

/** Explicit parents by task number, in compressed rows: the task's own list, then `dependsOn` edges. */
interface ExplicitParents {
  ownStart: Int32Array;
  own: Int32Array;
  extraStart: Int32Array;
  extra: Int32Array;
}

/** `fileOf` value of a name several tasks write (its copies are numbered apart). */
const MANY = -2;

/** A workflow built in code, as data (see WorkflowBuilder.toSource). */
export interface WorkflowSource {
  name: string;
  tasks: TaskDecl[];
  sizes: [string, number][];
  dependencies: [string, string][];
}

export class WorkflowBuilder {
  // Columns rather than an object per task (a million tasks): the declaration and its file names.
  private readonly decls: TaskDecl[] = [];
  private readonly inputNames: string[][] = [];
  private readonly outputNames: string[][] = [];
  private readonly sizes = new Map<string, number>();
  private readonly sizeColumns: [string[], number[]][] = [];
  private readonly outputSizes = new Map<string, number>();
  private readonly extraParents: [string, string][] = [];
  /** Sub-workflow jobs by id: the ids of their first tasks (no parent inside) and last tasks (no child inside). */
  private readonly subworkflows = new Map<string, { first: string[]; last: string[] }>();
  /** The files sub-workflows were read from (a rerun checks them as it checks the workflow's own file). */
  private readonly includedFiles: string[] = [];
  /** Their catalogs, merged (the first one read wins; the including file's own catalogs win over all). */
  private includedCatalogs: Catalogs | undefined;
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

  /**
   * Many sizes at once (a loader's file list), kept as columns until the build rather than a map entry
   * each: as `file` for each name, applied after every task's own sizes.
   */
  fileSizes(names: string[], sizes: number[]): this {
    this.sizeColumns.push([names, sizes]);
    return this;
  }

  /** A task running a real executable: `argv[0]` is the program. */
  command(id: string, argv: string[], io: TaskOptions & Pick<CommandSpec, 'stdin' | 'stdout' | 'stderr'> = {}): this {
    if (argv.length === 0) throw this.error(id, 'a command task needs a program');
    const { stdin, stdout, stderr, ...rest } = io;
    const redirects = { ...(stdin !== undefined ? { stdin } : {}), ...(stdout !== undefined ? { stdout } : {}), ...(stderr !== undefined ? { stderr } : {}) };
    return this.task({ id, command: { program: argv[0]!, args: argv.slice(1), ...redirects }, ...rest });
  }

  /** A task running an exported JavaScript function (see WorkflowFunction). */
  fn(id: string, ref: FunctionRef, io: TaskOptions & { args?: string[] } = {}): this {
    return this.task({ id, fn: ref, ...io });
  }

  task(decl: TaskDecl): this {
    if (typeof decl.id !== 'string' || decl.id === '') throw this.error(undefined, 'a task needs a non-empty string id', decl.line);
    // A redirect's file is the task's input (stdin) or output (stdout, stderr), declared or not.
    const c = decl.command;
    if (c && (c.stdin !== undefined || c.stdout !== undefined || c.stderr !== undefined)) {
      const named = (uses: (string | FileUse)[] | undefined, name: string) => (uses ?? []).some((u) => (typeof u === 'string' ? u : u.name) === name);
      if (c.stdin !== undefined && !named(decl.inputs, c.stdin)) decl = { ...decl, inputs: [...(decl.inputs ?? []), c.stdin] };
      for (const out of [c.stdout, c.stderr]) if (out !== undefined && !named(decl.outputs, out)) decl = { ...decl, outputs: [...(decl.outputs ?? []), out] };
      if (c.stdout !== undefined && c.stdout === c.stderr) throw this.error(decl.id, `stdout and stderr both go to ${c.stdout}`, decl.line);
    }
    if (decl.runtime !== undefined && !Number.isFinite(decl.runtime)) {
      throw this.error(decl.id, `runtime must be a number of seconds, got ${String(decl.runtime)}`, decl.line);
    }
    if (decl.cores !== undefined && !(Number.isInteger(decl.cores) && decl.cores >= 1)) throw this.error(decl.id, `cores must be a whole number of at least 1, got ${String(decl.cores)}`, decl.line);
    if (decl.memoryMb !== undefined && !(Number.isFinite(decl.memoryMb) && decl.memoryMb >= 0)) throw this.error(decl.id, `memory must be a non-negative number of MiB, got ${String(decl.memoryMb)}`, decl.line);
    if (decl.timeoutSeconds !== undefined && !(Number.isFinite(decl.timeoutSeconds) && decl.timeoutSeconds > 0)) throw this.error(decl.id, `timeout must be a positive number of seconds, got ${String(decl.timeoutSeconds)}`, decl.line);
    const names = (uses: (string | FileUse)[] | undefined, into: Map<string, number>): string[] =>
      uses === undefined ? [] : uses.every((u) => typeof u === 'string') ? (uses as string[]) : uses.map((u) => {
        if (typeof u === 'string') return u;
        if (u.size !== undefined) {
          if (!(Number.isFinite(u.size) && u.size >= 0)) throw this.error(decl.id, `file ${u.name}: size must be a non-negative number of bytes`, decl.line);
          into.set(u.name, Math.max(into.get(u.name) ?? 0, u.size));
        }
        return u.name;
      });
    this.inputNames.push(names(decl.inputs, this.sizes));
    this.outputNames.push(names(decl.outputs, this.outputSizes));
    this.decls.push(decl);
    return this;
  }

  /** An explicit edge declared apart from the child (DAX `<child><parent/></child>`, YAML jobDependencies). */
  dependsOn(child: string, parent: string): this {
    this.extraParents.push([child, parent]);
    return this;
  }

  /**
   * A sub-workflow job (Pegasus DAX `<dax>`/`<dag>`, YAML `pegasusWorkflow`/`condorWorkflow`) as part of
   * this workflow: each of its tasks joins as `<id>/<task id>`, with its files (shared by name with the
   * parent, as the parent's jobs read and write them). Edges naming the job are edges of the
   * sub-workflow: its first tasks wait for the job's parents and the job's children wait for its last
   * tasks. Readiness, stealing, resume and fingerprints then see only ordinary tasks.
   */
  subworkflow(id: string, sub: Workflow, file: string, line?: number): this {
    if (this.subworkflows.has(id)) throw this.error(id, 'duplicate sub-workflow job id', line);
    const idOf = (t: number) => `${id}/${sub.tasks[t]!.id}`;
    const uses = (list: number[]): FileUse[] => {
      const out: FileUse[] = [];
      for (const f of list) {
        const file = sub.files[f]!;
        if (!file.marker) out.push(file.size > 0 ? { name: file.name, size: file.size } : { name: file.name });
      }
      return out;
    };
    const hasChild = new Uint8Array(sub.tasks.length);
    sub.tasks.forEach((task) => task.parents.forEach((p) => (hasChild[p] = 1)));
    const first: string[] = [];
    const last: string[] = [];
    sub.tasks.forEach((task, t) => {
      const decl: TaskDecl = {
        id: idOf(t), name: task.name, category: task.category, runtime: task.runtime, inputs: uses(task.inputs), outputs: uses(task.outputs),
        parents: task.parents.map(idOf), ...(line !== undefined ? { line } : {}),
      };
      for (const key of ['command', 'fn', 'args', 'cores', 'memoryMb', 'timeoutSeconds', 'transformation'] as const) if (task[key] !== undefined) (decl as unknown as Record<string, unknown>)[key] = task[key];
      this.task(decl);
      if (task.parents.length === 0) first.push(decl.id);
      if (!hasChild[t]) last.push(decl.id);
    });
    this.subworkflows.set(id, { first, last });
    this.includedFiles.push(file, ...(sub.includes ?? []));
    if (sub.catalogs) this.includedCatalogs = mergeCatalogs(this.includedCatalogs ?? emptyCatalogs(), sub.catalogs);
    for (const w of sub.warnings) this.warnings.push(`sub-workflow ${id} (${file}): ${w}`);
    return this;
  }

  /** Edges naming a sub-workflow job, as edges of its tasks (first tasks as children, last tasks as parents). */
  private expandSubworkflowEdges(): void {
    if (this.subworkflows.size === 0) return;
    const asParent = (ref: string) => this.subworkflows.get(ref)?.last ?? [ref];
    const asChild = (ref: string) => this.subworkflows.get(ref)?.first ?? [ref];
    const edges = this.extraParents.splice(0);
    for (const [child, parent] of edges) for (const c of asChild(child)) for (const p of asParent(parent)) this.extraParents.push([c, p]);
    this.decls.forEach((d, t) => {
      if (d.parents?.some((p) => this.subworkflows.has(p))) this.decls[t] = { ...d, parents: d.parents.flatMap(asParent) };
    });
  }

  /** The declarations, as plain data: a job carries them to every member, which builds the same workflow. */
  toSource(): WorkflowSource {
    this.expandSubworkflowEdges();
    return { name: this.name, tasks: this.decls, sizes: [...this.sizes, ...this.sizeColumns.flatMap(([names, sizes]) => names.map((name, i): [string, number] => [name, sizes[i]!]))], dependencies: this.extraParents };
  }

  static fromSource(source: WorkflowSource): WorkflowBuilder {
    const b = new WorkflowBuilder(source.name);
    for (const [name, size] of source.sizes) b.file(name, size);
    for (const decl of source.tasks) b.task(decl);
    for (const [child, parent] of source.dependencies) b.dependsOn(child, parent);
    return b;
  }

  build(): Workflow {
    this.expandSubworkflowEdges();
    const n = this.decls.length;
    if (n === 0) throw this.error(undefined, 'the workflow has no tasks');
    const byId = new Map<string, number>();
    for (let t = 0; t < n; t++) {
      const decl = this.decls[t]!;
      byId.set(decl.id, t);
      if (byId.size === t + 1) continue;
      const first = this.decls.findIndex((d) => d.id === decl.id); // the map now holds t: look the first one up
      throw this.error(decl.id, `duplicate task id (first declared at task ${first + 1})`, decl.line);
    }
    let byName: Map<string, number> | undefined; // built only if a reference is not an id (WfCommons 1.4 names parents)
    const lookup = (ref: string): number | undefined => {
      const t = byId.get(ref);
      if (t !== undefined) return t;
      if (!byName) {
        const names = new Map<string, number>();
        this.decls.forEach((d, q) => {
          const name = d.name ?? d.id;
          names.set(name, names.has(name) ? -1 : q); // a name used twice cannot name a parent
        });
        byName = names;
      }
      return byName.get(ref);
    };
    const explicit = this.explicitParents(lookup);
    const { files, fileNames, inputs: inputsOf, outputs: outputsOf } = this.numberFiles(explicit);
    const tasks: WorkflowTask[] = new Array(n);
    let explicitEdges = 0;
    let fileEdges = 0;
    // Stamps instead of sets: seen[q] === t means q is already a parent of t (a million tasks, no garbage).
    const seenExplicit = new Int32Array(n).fill(-1);
    const seenFile = new Int32Array(n).fill(-1);
    let edges = 0;
    const { ownStart, own, extraStart, extra } = explicit;
    for (let t = 0; t < n; t++) {
      const parents: number[] = [];
      for (let i = ownStart[t]!; i < ownStart[t + 1]!; i++) {
        const q = own[i]!;
        if (seenExplicit[q] === t) continue;
        seenExplicit[q] = t;
        parents.push(q);
      }
      for (let i = extraStart[t]!; i < extraStart[t + 1]!; i++) {
        const q = extra[i]!;
        if (seenExplicit[q] === t) continue;
        seenExplicit[q] = t;
        parents.push(q);
      }
      explicitEdges += parents.length;
      const inputs = inputsOf[t]!;
      for (let i = 0; i < inputs.length; i++) {
        const q = files[inputs[i]!]!.producer;
        if (q < 0 || q === t || seenFile[q] === t) continue;
        seenFile[q] = t;
        fileEdges++;
        if (seenExplicit[q] !== t) parents.push(q);
      }
      sortSmall(parents);
      edges += parents.length;
      const d = this.decls[t]!;
      const task: WorkflowTask = { id: d.id, name: d.name ?? d.id, category: d.category ?? d.name ?? d.id, runtime: d.runtime ?? 0, inputs, outputs: outputsOf[t]!, parents };
      if (d.command) task.command = d.command;
      if (d.fn) task.fn = d.fn;
      if (d.args) task.args = d.args;
      if (d.cores !== undefined) task.cores = d.cores;
      if (d.memoryMb !== undefined) task.memoryMb = d.memoryMb;
      if (d.timeoutSeconds !== undefined) task.timeoutSeconds = d.timeoutSeconds;
      if (d.transformation) task.transformation = d.transformation;
      tasks[t] = task;
    }
    this.addMarkers(tasks, files);
    // Lines kept compactly (not the declarations, nor a loader's text) for errors found after loading.
    const lines = new Int32Array(n);
    for (let t = 0; t < n; t++) lines[t] = this.decls[t]!.line ?? 0;
    const graph = computeOrder(tasks, (cycle) => {
      const first = this.decls[cycle[0]!]!;
      return this.error(first.id, `dependency cycle: ${[...cycle, cycle[0]!].map((t) => tasks[t]!.id).join(' -> ')}`, first.line);
    });
    return {
      name: this.name, format: this.format, source: this.source.file, tasks, files, order: graph.order,
      counts: { tasks: n, explicitEdges, fileEdges, edges, files: fileNames, totalRuntime: graph.totalRuntime, criticalPath: graph.criticalPath, depth: graph.depth },
      warnings: this.warnings,
      ...(this.includedFiles.length > 0 ? { includes: [...new Set(this.includedFiles)] } : {}),
      ...(this.includedCatalogs ? { catalogs: this.includedCatalogs } : {}),
      taskLines: lines,
      taskIndex: (id) => byId.get(id) ?? -1,
      lineOf: (id) => {
        const t = byId.get(id);
        return t === undefined || lines[t] === 0 ? undefined : lines[t];
      },
    };
  }

  /** Resolves every explicit parent (refusing unknown ones in declaration order) into compressed rows. */
  private explicitParents(lookup: (ref: string) => number | undefined): ExplicitParents {
    const n = this.decls.length;
    let total = 0;
    for (const d of this.decls) total += d.parents?.length ?? 0;
    const ownStart = new Int32Array(n + 1);
    const own = new Int32Array(total);
    let k = 0;
    for (let t = 0; t < n; t++) {
      const d = this.decls[t]!;
      ownStart[t] = k;
      for (const ref of d.parents ?? []) {
        const q = lookup(ref);
        if (q === undefined || q < 0) throw this.error(d.id, `parent "${ref}" is not a task of this workflow`, d.line);
        own[k++] = q;
      }
    }
    ownStart[n] = k;
    const m = this.extraParents.length;
    const child = new Int32Array(m);
    const parent = new Int32Array(m);
    const extraStart = new Int32Array(n + 1);
    this.extraParents.forEach(([childId, parentRef], i) => {
      const c = lookup(childId);
      if (c === undefined || c < 0) throw this.error(childId, 'a dependency names a child that is not a task of this workflow');
      const q = lookup(parentRef);
      if (q === undefined || q < 0) throw this.error(this.decls[c]!.id, `parent "${parentRef}" is not a task of this workflow`, this.decls[c]!.line);
      child[i] = c;
      parent[i] = q;
      extraStart[c + 1]!++;
    });
    for (let t = 0; t < n; t++) extraStart[t + 1]! += extraStart[t]!;
    const fill = extraStart.slice(0, n);
    const extra = new Int32Array(m);
    for (let i = 0; i < m; i++) extra[fill[child[i]!]!++] = parent[i]!; // stable: a child's edges keep their order
    return { ownStart, own, extraStart, extra };
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
   * Files are numbered in the order their names are first written, then workflow inputs as read.
   */
  private numberFiles(explicit: ExplicitParents): { files: WorkflowFile[]; fileNames: number; inputs: number[][]; outputs: number[][] } {
    const n = this.decls.length;
    // Every name gets an entry when first met (written first, then read): its writer, then its file number.
    const entryOf = new Map<string, number>();
    const entryName: string[] = [];
    const entryWriter: number[] = [];
    const writersOf = new Map<number, number[]>(); // entry → its writers, for names several tasks write
    let outputRefs = 0;
    let references = 0;
    for (let t = 0; t < n; t++) {
      outputRefs += this.outputNames[t]!.length;
      references += this.outputNames[t]!.length + this.inputNames[t]!.length;
    }
    const outputEntry = new Int32Array(outputRefs); // each output reference's entry: looked up once
    let k = 0;
    for (let t = 0; t < n; t++) {
      for (const name of this.outputNames[t]!) {
        const before = entryOf.size;
        const e = entryOf.get(name) ?? entryOf.set(name, before).size - 1;
        outputEntry[k++] = e;
        if (e === before) {
          entryName.push(name);
          entryWriter.push(t);
          continue;
        }
        const w = entryWriter[e]!;
        if (w === MANY) {
          const list = writersOf.get(e)!;
          if (list[list.length - 1] !== t) list.push(t);
        } else if (w !== t) {
          entryWriter[e] = MANY;
          writersOf.set(e, [w, t]);
        }
      }
    }
    // Sizes from the columns go straight to the entries of written names (one lookup each); others join the map.
    const declared: (number | undefined)[] = new Array(entryName.length);
    for (const [names, sizes] of this.sizeColumns) {
      for (let i = 0; i < names.length; i++) {
        const e = entryOf.get(names[i]!);
        if (e !== undefined) declared[e] = sizes[i];
        else this.sizes.set(names[i]!, sizes[i]!);
      }
    }
    const files: WorkflowFile[] = [];
    const sizeOf = (name: string, written: boolean, e = -1) => {
      const asInput = declared[e] ?? this.sizes.get(name);
      const asOutput = this.outputSizes.size === 0 ? undefined : this.outputSizes.get(name);
      return (written ? asOutput ?? asInput : asInput ?? asOutput) ?? 0;
    };
    const entryFile: number[] = new Array(entryName.length);
    const copyOf = new Map<string, number>(); // `${name}@${writer id}` → that writer's copy
    let copies = 0;
    for (let e = 0; e < entryName.length; e++) {
      const name = entryName[e]!;
      entryFile[e] = files.length;
      if (entryWriter[e] !== MANY) {
        files.push({ key: name, name, size: sizeOf(name, true, e), producer: entryWriter[e]!, consumers: [] });
        continue;
      }
      for (const t of writersOf.get(e)!) {
        const key = `${name}@${this.decls[t]!.id}`;
        copyOf.set(key, files.length);
        files.push({ key, name, size: sizeOf(name, true, e), producer: t, consumers: [] });
        copies++;
      }
    }
    // Stamps instead of sets to drop a task's repeated files: 2t for its outputs, 2t + 1 for its inputs.
    const seen = new Int32Array(files.length + references).fill(-1);
    const inputs: number[][] = new Array(n);
    const outputs: number[][] = new Array(n);
    k = 0;
    for (let t = 0; t < n; t++) {
      const outs: number[] = [];
      for (const name of this.outputNames[t]!) {
        const e = outputEntry[k++]!;
        const f = entryWriter[e] === MANY ? copyOf.get(`${name}@${this.decls[t]!.id}`)! : entryFile[e]!;
        if (seen[f] === 2 * t) continue;
        seen[f] = 2 * t;
        outs.push(f);
      }
      outputs[t] = outs;
      const ins: number[] = [];
      for (const name of this.inputNames[t]!) {
        const e = entryOf.get(name);
        let f: number;
        if (e === undefined) {
          // A workflow input: no task writes it.
          f = files.length;
          entryOf.set(name, entryName.length);
          entryName.push(name);
          entryWriter.push(-1);
          entryFile.push(f);
          files.push({ key: name, name, size: sizeOf(name, false), producer: -1, consumers: [] });
        } else if (entryWriter[e] === MANY) {
          const writers = writersOf.get(e)!;
          const parents = this.explicitOf(explicit, t);
          const mine = writers.filter((q) => parents.includes(q));
          for (const q of mine.length > 0 ? mine : writers.filter((q) => q !== t)) {
            const copy = copyOf.get(`${name}@${this.decls[q]!.id}`)!;
            if (seen[copy] === 2 * t + 1) continue;
            seen[copy] = 2 * t + 1;
            ins.push(copy);
            files[copy]!.consumers.push(t);
          }
          continue;
        } else {
          f = entryFile[e]!;
          if (entryWriter[e] === t) continue; // reads what it writes itself
        }
        if (seen[f] === 2 * t + 1) continue;
        seen[f] = 2 * t + 1;
        ins.push(f);
        files[f]!.consumers.push(t);
      }
      inputs[t] = ins;
    }
    if (writersOf.size > 0) this.warnings.push(`${writersOf.size} file name(s) are written by several tasks; each writer's copy is kept apart and read by that writer's explicit children`);
    return { files, fileNames: files.length - copies + writersOf.size, inputs, outputs };
  }

  private explicitOf(e: ExplicitParents, t: number): number[] {
    return [...e.own.subarray(e.ownStart[t]!, e.ownStart[t + 1]!), ...e.extra.subarray(e.extraStart[t]!, e.extraStart[t + 1]!)];
  }

  private error(taskId: string | undefined, detail: string, line?: number): WorkflowError {
    const at = line ?? (taskId === undefined ? undefined : this.source.lineOf?.(taskId));
    return new WorkflowError(this.source.file, at, taskId === undefined ? detail : `task ${taskId}: ${detail}`);
  }
}

/** Ascending, in place: insertion sort for the few parents most tasks have (no comparator calls). */
function sortSmall(list: number[]): void {
  if (list.length > 16) {
    list.sort((x, y) => x - y);
    return;
  }
  for (let i = 1; i < list.length; i++) {
    const x = list[i]!;
    let j = i - 1;
    for (; j >= 0 && list[j]! > x; j--) list[j + 1] = list[j]!;
    list[j + 1] = x;
  }
}
