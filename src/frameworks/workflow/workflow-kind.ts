/**
 * The workflow job kind: every member loads the workflow (from the shared directory, as AME's
 * dispatchers read task lists from the shared file system) and runs a WorkflowEngine — dispatcher,
 * location-service shard and worker in one — whose messages travel as layer messages; the elected
 * leader is the submitter. Task state lives in memory on the members; the journal in the shared
 * directory is what a reconcile or a resumed run reads.
 */
import { hostname, totalmem } from 'node:os';
import { dirname } from 'node:path';
import { defineJobKind, type LayerBody, type MemberContext, type MemberRole } from '../../runtime/kinds/job-kind.js';
import { EventRing } from '../../runtime/kinds/kind-events.js';
import { log as rootLog } from '../../util/log.js';
import { NO_METRICS } from '../../runtime/metrics/metrics-registry.js';
import { TASK_WAIT } from './task-wait-histogram.js';
import type { DispatchMode } from './dispatcher.js';
import { chunksOf, checkChunk, FileAssembly } from './file-chunks.js';
import { applyCatalogs, type CatalogFiles } from './catalog-resolution.js';
import { fingerprintOf, recipeHash, type FingerprintInputs } from './fingerprint.js';
import { ExpansionLog, expansionsPath, type ExpansionRecord } from './expansion-log.js';
import { Journal, type Completion } from './journal.js';
import { readMemberPlan, readRunInfo } from './run-directory.js';
import type { FileLocation } from './location-shard.js';
import { loadWorkflow } from './load-workflow.js';
import { loadCompiled } from './compiled-workflow.js';
import { validateWorkflowMessage } from './protocol.js';
import { Rendezvous } from './rendezvous.js';
import { sharedName } from './shared-path.js';
import { StallWatch } from './stall-watch.js';
import { ProvenanceWriter, writeOutcome, type AttemptStatus, type RunOutcome } from './provenance.js';
import { CommandFailed, InputLost, TaskExecution, type ExecutionCounters, type StorageMode, type TaskOutcome } from './task-execution.js';
import { WorkflowBuilder, type TaskDecl, type WorkflowSource } from './workflow-builder.js';
import { AdditionError, applyAddition, checkAddition, fileNumber } from './workflow-growth.js';
import { WorkflowEngine, type EngineStats } from './workflow-engine.js';
import type { AmeUnits } from './ame-units.js';
import type { Workflow } from './workflow.js';

export interface WorkflowJobConfig {
  /** A workflow file every member can read, or a workflow built in code. */
  source: { path: string } | { code: WorkflowSource };
  /** The shared directory: workflow inputs are read from it, final outputs written to it. */
  shared: string;
  /** The run's directory (run-directory.ts): its plan, journal, task logs and provenance. */
  run: string;
  replay?: number;
  storage?: StorageMode;
  mode?: DispatchMode;
  partitions?: number;
  /** Location-service shards and dispatchers per group of members (ame-units.ts; default AME's 1 and 1 per 64). */
  units?: AmeUnits;
  maxAttempts?: number;
  stealing?: boolean;
  /** Record each task's start and end (for the Gantt, and for checking order in tests). */
  trace?: boolean;
  /** How often (ms) the leader looks for a run that cannot progress; three idle looks in a row fail it (default 5000). */
  stallLookMs?: number;
  /** Seconds a command task may run unless it says otherwise (no limit by default). */
  taskTimeout?: number;
  /** Bytes kept of each of a command task's stdout and stderr in `<run>/logs/` (default 1 MiB). */
  logBytes?: number;
  /** Memory (MiB) each member offers command tasks (default: the machine's). Cores offered: the member's worker threads. */
  nodeMemoryMb?: number;
  /** Catalog files and the site (Pegasus): applied by every member as by the submitter (not in a replay). */
  catalogs?: CatalogFiles;
  /** Where command tasks' working directories are made (the site's local scratch). */
  scratch?: string;
}

export interface MemberReport extends EngineStats, ExecutionCounters {
  node: string;
  trace: [number, number, number][];
  /** A few tasks waiting here, in words (what they wait for). */
  waits: string[];
}

export interface WorkflowResult {
  /** Tasks completed in this run (re-runs that recreated lost files apart). */
  tasks: number;
  members: MemberReport[];
  /** The run was stopped (`stop` control request); running it again resumes it. */
  stopped?: boolean;
  /** Tasks that were up to date when the run started (set by runWorkflow). */
  upToDate?: number;
  /** Everything was up to date: no job was run (set by runWorkflow). */
  nothingToDo?: boolean;
  /** The run directory (set by runWorkflow when a job ran). */
  run?: string;
}

interface WorkflowMember extends MemberRole {
  lead(finish: (outcome: { ok: true } | { ok: false; error: string }) => void): void;
  stopAll(): Promise<void>;
  unlead(): void;
  report(): Promise<MemberReport[]>;
}

/** The run's workflow, on a member: a file through its compiled copy beside the runs when that is current (compiled-workflow.ts). */
export async function workflowOf(source: WorkflowJobConfig['source'], run?: string): Promise<Workflow> {
  if (!('path' in source)) return WorkflowBuilder.fromSource(source.code).build();
  return run === undefined ? loadWorkflow(source.path) : loadCompiled(source.path, dirname(dirname(run)), { keep: false });
}

async function member(ctx: MemberContext): Promise<WorkflowMember> {
  const cfg = ctx.spec.kindSpec as WorkflowJobConfig;
  const workflow = await workflowOf(cfg.source, cfg.run);
  if (cfg.replay === undefined) applyCatalogs(workflow, cfg.catalogs ?? {});
  // Tasks added at run time (workflow-growth.ts): every member applies the run's additions in the order
  // of its expansion log; those of tasks up to date from an earlier run were applied before the plan was made.
  const expansions = new ExpansionLog(cfg.run);
  const early = expansions.readNew();
  for (const rec of early.filter((r) => r.before)) applyAddition(workflow, workflow.taskIndex(rec.by), rec.tasks);
  const plan = readMemberPlan(cfg.run, workflow.tasks.length);
  const runInfo = readRunInfo(cfg.run);
  /** Adding tasks whose additions this member has applied. */
  const expandedBy = new Set(early.filter((r) => r.before).map((r) => r.by));
  /** Final outputs of tasks done before this run that added tasks read (they are in the shared directory). */
  const sharedNow = new Set<number>();
  /** How an added task is fingerprinted: as the submitter did the others, with the inputs' stamps it recorded. */
  const fingerprintHow: FingerprintInputs = {
    inputStamp: (f) => {
      const s = runInfo.inputs[workflow.files[f]!.name];
      return s === undefined ? 'unknown' : runInfo.detection === 'content' ? s.sha256 ?? 'unknown' : `${s.size}:${s.mtimeNs}`;
    },
    ...(cfg.replay !== undefined ? { replay: cfg.replay } : {}),
  };
  /** Applies one addition (its fingerprints as recorded, or computed here by the leader). Returns the first new task and the final outputs now read. */
  const grow = (by: number, decls: TaskDecl[], fingerprints?: string[]): { from: number; shared: number[] } => {
    const shared: number[] = [];
    for (const d of decls) {
      for (const name of d.inputs as string[]) {
        const f = fileNumber(workflow, name);
        const file = f === undefined ? undefined : workflow.files[f]!;
        if (file && file.producer >= 0 && file.consumers.length === 0 && plan.upToDate[file.producer] === 1 && !sharedNow.has(f!)) {
          shared.push(f!);
          sharedNow.add(f!);
        }
      }
    }
    const from = workflow.tasks.length;
    const order = applyAddition(workflow, by, decls);
    if (fingerprints) plan.fingerprints.push(...fingerprints);
    else for (const t of order) plan.fingerprints[t] = fingerprintOf(workflow, t, plan.fingerprints, fingerprintHow);
    expandedBy.add(workflow.tasks[by]!.id);
    return { from, shared };
  };
  const byId = (rec: ExpansionRecord): number => {
    const by = workflow.taskIndex(rec.by);
    if (by < 0) throw new Error(`${expansionsPath(cfg.run)}: addition ${rec.seq} by task ${rec.by}, which this member does not know`);
    return by;
  };
  for (const rec of early.filter((r) => !r.before)) grow(byId(rec), rec.tasks, rec.fingerprints);
  // A function task's module is code the job names: admitted by the node's rules before any task runs
  // (tasks added later: by the leader before it records them).
  const admitted = new Set<string>();
  const admitFunctions = (tasks: ReadonlyArray<{ id: string; fn?: { module: string } | undefined }>) => {
    for (const t of tasks) {
      if (!t.fn || admitted.has(t.fn.module)) continue;
      ctx.code.admitModule(t.fn.module, `function module of workflow task ${t.id}`);
      admitted.add(t.fn.module);
    }
  };
  admitFunctions(workflow.tasks);
  const provenance = new ProvenanceWriter(cfg.run, ctx.nodeId);
  const host = hostname();
  const journal = new Journal(cfg.run, ctx.nodeId);
  /** This run's journal, with the tasks up to date before it started (done on no live node) and the files present then. */
  const readJournal = () => {
    const state = Journal.read(cfg.run);
    plan.upToDate.forEach((u, t) => {
      if (u === 1 && !state.done.has(t)) state.done.set(t, EARLIER_RUN);
    });
    for (const f of plan.saved) state.saved.add(f);
    for (const f of sharedNow) state.saved.add(f);
    return state;
  };
  /** What each task that finished here wrote to the shared directory, until its completion is journaled. */
  const wroteBy = new Map<number, TaskOutcome['wrote']>();
  const completion = (task: number, node: string): Completion => {
    const wrote = wroteBy.get(task) ?? [];
    wroteBy.delete(task);
    return { task, node, fingerprint: plan.fingerprints[task]!, recipe: recipeHash(workflow, workflow.tasks[task]!, cfg.replay), id: workflow.tasks[task]!.id, wrote };
  };
  const trace: [number, number, number][] = [];
  /** The latest tasks' spans on this member, published for the dashboard's Gantt (bounded). */
  const spans = new EventRing(100);
  const log = ctx.log ?? rootLog.child({ job: ctx.spec.id, node: ctx.nodeId });
  const taskWait = (ctx.metrics ?? NO_METRICS).histogram(TASK_WAIT);
  let finish: ((o: { ok: true } | { ok: false; error: string }) => void) | undefined;
  let putSeq = 0;
  let fetchSeq = 0;
  const fetches = new Map<number, { node: string; file: FileAssembly; resolve: (b: Uint8Array) => void; reject: (e: Error) => void }>();
  /** Files handed to a storage member until it confirms (kept here instead when it cannot take them). */
  const puts = new Map<number, { node: string; file: number; bytes: Uint8Array; resolve: (loc: FileLocation) => void }>();
  /** Isolated storage: files other members are handing to this one (`from id` → its chunks so far). */
  const incoming = new Map<string, FileAssembly>();
  const reports = new Map<number, (r: MemberReport) => void>();
  let reportSeq = 0;
  // Every message says how many additions its sender applied: a receiver behind reads them first (the numbers it names may be new).
  const send = (to: string, body: LayerBody) => void ctx.send(to, expansions.count > 0 ? { ...body, g: expansions.count } : body).catch((err: unknown) => log.debug('workflow', `to ${to}: ${(err as Error).message}`));

  const exec = new TaskExecution(workflow, {
    jobId: ctx.spec.id, nodeId: ctx.nodeId, shared: cfg.shared, storage: cfg.storage ?? 'collocated', run: cfg.run,
    ...(cfg.replay !== undefined ? { replay: cfg.replay } : {}), ...(cfg.logBytes !== undefined ? { logBytes: cfg.logBytes } : {}), ...(cfg.taskTimeout !== undefined ? { taskTimeout: cfg.taskTimeout } : {}),
    ...(cfg.scratch !== undefined ? { scratch: cfg.scratch } : {}),
  },
    ctx.workers, (file, bytes) => {
      const peers = ctx.peers();
      if (peers.length === 0) {
        exec.keep(file, bytes);
        return Promise.resolve({ node: ctx.nodeId });
      }
      const to = new Rendezvous(peers).ownerOf(workflow.files[file]!.key);
      const id = putSeq++;
      exec.counters.bytesPeer += bytes.length;
      return new Promise((resolve) => {
        puts.set(id, { node: to, file, bytes, resolve });
        for (const chunk of chunksOf(bytes)) {
          ctx.send(to, { type: 'wf-put', id, file, ...chunk }).catch((err: unknown) => {
            log.debug('workflow', `to ${to}: ${(err as Error).message}`);
            keepHere(id);
          });
        }
      });
    }, (node, file) => new Promise((resolve, reject) => {
      // A holder that left (its files are about to be recreated elsewhere), or a request that cannot leave: lost, not pending forever.
      if (!ctx.peers().includes(node)) return reject(new InputLost(`${node} is not a member`));
      const id = fetchSeq++;
      fetches.set(id, { node, file: new FileAssembly(), resolve, reject });
      ctx.send(node, { type: 'wf-fetch', id, file }).catch((err: unknown) => {
        if (!fetches.delete(id)) return;
        reject(new InputLost(`to ${node}: ${(err as Error).message}`));
      });
    }));
  /** A put its storage member cannot take (gone, unreachable, not in the job): this member keeps the file, else its producer would wait forever. */
  const keepHere = (id: number) => {
    const p = puts.get(id);
    if (!p) return;
    puts.delete(id);
    exec.keep(p.file, p.bytes);
    p.resolve({ node: ctx.nodeId });
  };
  const failPuts = (node: string) => {
    for (const [id, p] of puts) if (p.node === node) keepHere(id);
  };
  /** A fetch whose holder is gone: the task waits for the file again. */
  const failFetches = (node: string) => {
    for (const [id, f] of fetches) {
      if (f.node !== node) continue;
      fetches.delete(id);
      f.reject(new InputLost(`${node} left`));
    }
  };
  const engine: WorkflowEngine = new WorkflowEngine(workflow, ctx.nodeId, {
    send,
    run: (task, inputs, recreate, attempt) => {
      let started = 0;
      const spec = workflow.tasks[task]!;
      const record = (status: AttemptStatus, io: TaskOutcome['io'] | undefined, err?: Error) => {
        const end = performance.timeOrigin + performance.now();
        const start = started === 0 ? end : started;
        provenance.ended({
          task: spec.id, transformation: spec.category, attempt, ...(recreate ? { recreate } : {}), host, node: ctx.nodeId,
          start: new Date(start).toISOString(), end: new Date(end).toISOString(), duration: (end - start) / 1000, status,
          ...(spec.command && cfg.replay === undefined && !spec.fn ? { exitCode: err instanceof CommandFailed ? err.exitCode : err ? null : 0 } : {}),
          ...(err ? { error: err.message } : {}),
          bytesIn: { shared: io?.shared ?? 0, peer: io?.peer ?? 0, local: io?.local ?? 0 }, bytesOut: io?.out ?? 0,
        });
      };
      exec.run(task, inputs, () => {
        started = performance.timeOrigin + performance.now();
        provenance.started(spec.id, attempt, started, recreate);
        const ms = engine.waited(task);
        if (ms !== undefined) taskWait.observe(ms / 1000);
      }, attempt).then(
        (out) => {
          record('ok', out.io);
          const ended = performance.timeOrigin + performance.now();
          const finished = () => {
            wroteBy.set(task, out.wrote);
            if (cfg.trace) trace.push([task, started, ended]);
            spans.put({ id: spec.id, lane: ctx.nodeId, label: spec.category, at: Math.round(started), end: Math.round(ended) });
            engine.taskFinished(task, out.located);
          };
          // A task that adds tasks finishes once every member can know them: the leader records its additions first.
          if (out.added === undefined || expandedBy.has(spec.id)) return finished();
          const size = JSON.stringify(out.added).length;
          if (size > MAX_ADDITION_BYTES) return engine.taskFailed(task, `the tasks it adds take ${size} bytes as JSON, more than ${MAX_ADDITION_BYTES} (add them from several tasks)`);
          adding.set(task, { added: out.added, finished, asked: 0 });
          askToAdd(task);
        },
        (err: Error) => {
          record(err instanceof InputLost ? 'input-lost' : 'failed', undefined, err);
          return err instanceof InputLost ? engine.inputLost(task, err.file) : engine.taskFailed(task, err.message);
        },
      );
    },
    readJournal,
    journal: (done, recreated) => journal.done(done.map(([t, node]) => completion(t, node)), recreated),
    finish: (o) => finish?.(o),
    random: () => ctx.rng.next(),
    now: () => performance.now(),
    defer: (flush) => void setImmediate(flush),
    // Per thread: the running task, the next one queued behind it, and PREFETCH more whose inputs are on their way.
  }, {
    slots: (2 + PREFETCH) * ctx.workers.size, saved: new Set([...plan.saved, ...sharedNow]), ...pick(cfg),
    // Command tasks run as processes: each takes the cores and memory it says it needs (1 core by default) of what this member offers.
    capacity: { cores: ctx.workers.size, memoryMb: cfg.nodeMemoryMb ?? Math.floor(totalmem() / 2 ** 20) },
    needs: (t) => {
      const task = workflow.tasks[t]!;
      return cfg.replay === undefined && task.command && !task.fn ? { cores: task.cores ?? 1, memoryMb: task.memoryMb ?? 0 } : undefined;
    },
    ...(cfg.replay !== undefined ? { short: { seconds: (t: number) => Math.max(0, workflow.tasks[t]!.runtime) * cfg.replay!, budget: SHORT_BUDGET_SECONDS * ctx.workers.size, max: SHORT_MAX * ctx.workers.size } } : {}),
  });
  /** Tasks of this member that succeeded and add tasks, until the leader has recorded their additions. */
  const adding = new Map<number, { added: unknown[]; finished: () => void; asked: number }>();
  const askToAdd = (task: number) => {
    const a = adding.get(task)!;
    a.asked = Date.now();
    const leader = engine.currentView?.leader;
    if (leader === undefined) return; // asked again by the ticker once there is a leader
    const body: LayerBody = { type: 'wf-add?', task, id: workflow.tasks[task]!.id, tasks: a.added as never };
    if (leader === ctx.nodeId) onAdd(body);
    else send(leader, body);
  };
  /** Additions applied here: those of tasks waiting for theirs finish now. */
  const settled = () => {
    for (const [task, a] of adding) {
      if (!expandedBy.has(workflow.tasks[task]!.id)) continue;
      adding.delete(task);
      a.finished();
    }
  };
  /** Applies the additions the leader recorded since the last look. */
  const catchUp = () => {
    for (const rec of expansions.readNew()) {
      const { from, shared } = grow(byId(rec), rec.tasks, rec.fingerprints);
      engine.grew(from, shared);
    }
    settled();
  };
  /** Leader: a task asks to add tasks. Checked, fingerprinted, recorded in the run's log, then every member is told. */
  const onAdd = (body: LayerBody) => {
    if (!leading) return; // the adding member asks the leader it knows again
    catchUp();
    const id = body.id as string;
    if (expandedBy.has(id)) return void broadcastGrew();
    const by = workflow.taskIndex(id);
    let decls: TaskDecl[];
    try {
      if (by !== body.task) throw new AdditionError(`task ${id} asked to add tasks as task number ${body.task as number}, which is ${by < 0 ? 'no task' : `task ${workflow.tasks[by]!.id}`} here`);
      decls = checkAddition(workflow, by, body.tasks);
      admitFunctions(decls);
    } catch (err) {
      return finish?.({ ok: false, error: (err as Error).message });
    }
    const seq = expansions.count;
    const { from, shared } = grow(by, decls);
    expansions.append({ seq, by: id, byFingerprint: plan.fingerprints[by]!, tasks: decls, fingerprints: plan.fingerprints.slice(from) });
    const back = expansions.readNew();
    if (back.length !== 1 || back[0]!.by !== id) {
      return finish?.({ ok: false, error: `${expansionsPath(cfg.run)}: addition ${seq} by task ${id} was not read back as written (another leader wrote at the same time?): run the workflow again to resume` });
    }
    engine.grew(from, shared);
    broadcastGrew();
    settled();
  };
  const broadcastGrew = () => {
    for (const p of ctx.peers()) send(p, { type: 'wf-grew' });
  };
  /** Messages from members that applied more additions than are in the log here yet (a shared file system that lags): handled once they are. */
  const behind: [string, LayerBody][] = [];
  const ticker = setInterval(() => {
    engine.tick();
    if (behind.length > 0) {
      catchUp();
      const ready = behind.filter(([, b]) => (b.g as number) <= expansions.count);
      if (ready.length > 0) {
        behind.splice(0, behind.length, ...behind.filter(([, b]) => (b.g as number) > expansions.count));
        for (const [from, b] of ready) onMessage(from, b);
      }
    }
    const now = Date.now();
    for (const [task, a] of adding) if (now - a.asked > ASK_AGAIN_MS) askToAdd(task);
  }, 20);
  let pausedFrom: ((node: string) => void) | undefined;
  /** Stopping: run nothing new, let running tasks end, save the intermediate files unfinished tasks still need. */
  const pauseAndSave = async () => {
    engine.pause();
    provenance.paused();
    while (!engine.idle) await new Promise((r) => setTimeout(r, 20));
    const done = readJournal().done;
    const saved: Parameters<Journal['saved']>[0] = [];
    for (const [f] of engine.worker.held()) {
      const bytes = exec.held(f);
      const file = workflow.files[f]!;
      if (!bytes || file.consumers.every((c) => done.has(c))) continue;
      saved.push({ file: f, fingerprint: plan.fingerprints[file.producer]!, name: sharedName(file), stamp: await exec.writeShared(sharedName(file), bytes) });
    }
    journal.saved(saved);
  };
  let waitingForMembers: NodeJS.Timeout | undefined;
  const startLeading = () => {
    clearTimeout(waitingForMembers);
    waitingForMembers = undefined;
    if (leading) engine.lead([ctx.nodeId, ...ctx.peers()]);
  };
  // Task counts read now: the engine's stats are refreshed by its next flush, which may come after this report.
  const myReport = (): MemberReport => ({
    node: ctx.nodeId, ...engine.stats, ready: engine.worker.readyCount, waiting: engine.worker.waitingCount, running: engine.worker.running.size, ...exec.counters, trace,
    waits: waitsHere(),
  });
  /** Only when nothing runs or is ready here (what a stuck run is asked): a few waiting tasks and what became of their inputs' producers. */
  const waitsHere = (): string[] => {
    if (engine.worker.running.size > 0 || engine.worker.readyCount > 0 || engine.worker.waitingCount === 0) return [];
    const done = readJournal().done;
    const describe = (f: number): string => {
      const file = workflow.files[f]!;
      if (file.producer < 0) return `workflow input ${file.name}`;
      const producer = workflow.tasks[file.producer]!.id;
      const state = plan.upToDate[file.producer] === 1 ? 'up to date from an earlier run' : done.has(file.producer) ? `done on ${done.get(file.producer)!}` : 'not done';
      return file.marker ? `task ${producer} to finish (${state})` : `file ${file.name} (written by task ${producer}, ${state})`;
    };
    return engine.worker.waits(5).map(([t, files]) => `task ${workflow.tasks[t]!.id} waits for ${files.map(describe).join(', ')}`);
  };
  const watch = new StallWatch();
  let watching: NodeJS.Timeout | undefined;
  const stopWatching = () => {
    clearInterval(watching);
    watching = undefined;
  };
  let leading = false;
  /** Every member's figures (those that answer within 5 s). */
  const report = async (): Promise<MemberReport[]> => {
    const peers = ctx.peers();
    const id = reportSeq++;
    // Provenance written before figures are reported: a run that ends on a report has its records on disk.
    await provenance.flushed();
    const all: MemberReport[] = [myReport()];
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 5_000);
      reports.set(id, (r) => {
        all.push(r);
        if (all.length === peers.length + 1) {
          clearTimeout(timer);
          resolve();
        }
      });
      if (peers.length === 0) {
        clearTimeout(timer);
        resolve();
      }
      for (const p of peers) send(p, { type: 'wf-report?', id });
    });
    reports.delete(id);
    return all.sort((a, b) => (a.node < b.node ? -1 : 1));
  };
  /** The run is being stopped: idle members are expected, not stuck. */
  let stopping = false;

  const onMessage = (from: string, body: LayerBody): void => {
    const g = body.g;
    if (typeof g === 'number' && g > expansions.count) {
      catchUp();
      if (g > expansions.count) return void behind.push([from, body]);
    }
    switch (body.type) {
      case 'wf-add?':
        return onAdd(body);
      case 'wf-grew':
        return; // the additions it announces were read above
      case 'wf-put': {
        const key = `${from} ${body.id as number}`;
        const file = incoming.get(key) ?? new FileAssembly();
        let bytes: Uint8Array | undefined;
        try {
          bytes = file.add(body as never);
        } catch (err) {
          incoming.delete(key);
          return log.warn('workflow', `file ${body.file as number} from ${from} refused: ${(err as Error).message}`);
        }
        if (!bytes) return void incoming.set(key, file);
        incoming.delete(key);
        exec.keep(body.file as number, bytes);
        return send(from, { type: 'wf-put-ok', id: body.id as number, location: { node: ctx.nodeId } });
      }
      case 'wf-put-ok':
        puts.get(body.id as number)?.resolve(body.location as FileLocation);
        puts.delete(body.id as number);
        return;
      case 'wf-fetch': {
        const bytes = exec.held(body.file as number);
        if (!bytes) return send(from, { type: 'wf-file', id: body.id as number, missing: true });
        for (const chunk of chunksOf(bytes)) send(from, { type: 'wf-file', id: body.id as number, ...chunk });
        return;
      }
      case 'wf-file': {
        const f = fetches.get(body.id as number);
        if (!f) return;
        if (body.missing) {
          fetches.delete(body.id as number);
          return f.reject(new InputLost('the holder no longer has it'));
        }
        let bytes: Uint8Array | undefined;
        try {
          bytes = f.file.add(body as never);
        } catch (err) {
          fetches.delete(body.id as number);
          return f.reject(new Error(`fetching file ${body.id as number} from ${from}: ${(err as Error).message}`));
        }
        if (!bytes) return;
        fetches.delete(body.id as number);
        return f.resolve(bytes);
      }
      case 'wf-pause':
        void pauseAndSave().then(() => send(from, { type: 'wf-paused' }));
        return;
      case 'wf-paused':
        return pausedFrom?.(from);
      case 'wf-report?':
        return void provenance.flushed().then(() => send(from, { type: 'wf-report', id: body.id as number, report: myReport() as never }));
      case 'wf-report':
        return reports.get(body.id as number)?.(body.report as unknown as MemberReport);
      default:
        return engine.onMessage(from, body);
    }
  };

  return {
    onMessage,
    onWorker: (event) => exec.onWorkerEvent(event),
    peersJoined() {
      if (!leading) return;
      if (!waitingForMembers) return engine.lead([ctx.nodeId, ...ctx.peers()]);
      if (ctx.peers().length + 1 >= ctx.spec.nodes.requested) startLeading();
    },
    onBounce(from, body) {
      if (body.type === 'wf-fetch') failFetches(from);
      if (body.type === 'wf-put') failPuts(from);
    },
    peerLeft(node) {
      failFetches(node);
      failPuts(node);
      engine.peerGone(node);
      if (leading && !waitingForMembers) engine.lead([ctx.nodeId, ...ctx.peers()]);
    },
    drain: () => Promise.resolve(),
    stop: () => {
      clearInterval(ticker);
      clearTimeout(waitingForMembers);
      stopWatching();
    },
    load: () => ({ running: engine.stats.running, pooled: engine.stats.ready + engine.stats.waiting }),
    counters: () => ({ tasksDone: engine.stats.completed, steals: engine.stats.steals, figures: { 'tasks.ready': engine.stats.ready, 'tasks.running': engine.stats.running, 'tasks.waiting': engine.stats.waiting, 'tasks.done': engine.stats.finished, completed: engine.stats.completed, recreated: engine.stats.recreated, bytesFromShared: exec.counters.bytesFromShared, bytesToShared: exec.counters.bytesToShared, bytesPeer: exec.counters.bytesPeer }, events: { tasks: spans.list() } }) as never,
    lead(f) {
      finish = (outcome) => {
        stopWatching();
        f(outcome);
      };
      leading = true;
      watch.reset();
      let looking = false;
      watching ??= setInterval(() => {
        if (looking || !finish || stopping) return;
        looking = true;
        void report().then((reports) => {
          looking = false;
          const stuck = !stopping ? watch.observe(reports, ctx.peers().length + 1, workflow.tasks.length) : undefined;
          if (stuck) finish?.({ ok: false, error: stuck });
        });
      }, cfg.stallLookMs ?? STALL_LOOK_MS);
      // The first view waits (a little) for the nodes the job asked for: tasks dispatched to a first
      // member alone would reach the others only by stealing. A leader taking over (it saw a view) does not wait.
      if (engine.currentView || ctx.peers().length + 1 >= ctx.spec.nodes.requested) return startLeading();
      waitingForMembers = setTimeout(startLeading, MEMBERS_WAIT_MS);
    },
    /** Leader: every member pauses and saves; resolves when all have (or have left). */
    async stopAll() {
      stopping = true;
      const waiting = new Set(ctx.peers());
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 120_000);
        // Stopped only once this member has saved too: peers answering first must not end the job
        // (and this member) while its own files are still being written (the resumed run would have
        // to recreate them).
        let savedHere = false;
        const allSaved = () => {
          if (!savedHere || waiting.size > 0) return;
          clearTimeout(timer);
          resolve();
        };
        pausedFrom = (node) => {
          waiting.delete(node);
          allSaved();
        };
        for (const p of waiting) send(p, { type: 'wf-pause' });
        void pauseAndSave().then(() => {
          savedHere = true;
          allSaved();
        });
      });
      pausedFrom = undefined;
    },
    unlead() {
      leading = false;
      finish = undefined;
      stopWatching();
      clearTimeout(waitingForMembers);
      waitingForMembers = undefined;
    },
    report,
  };
}

/** Where a task that was up to date before the run started is "done": on no member (its intermediate files are gone unless saved). */
const EARLIER_RUN = '(an earlier run)';

/** A task's additions travel to the leader in one message: at most this much JSON. */
const MAX_ADDITION_BYTES = 4 * 2 ** 20;

/** A member asks the leader to record a task's additions again after this long without them (a leader that changed, a lost message). */
const ASK_AGAIN_MS = 2_000;

/** How long the leader waits for the job's nodes to join before it dispatches to those that did. */
const MEMBERS_WAIT_MS = 3_000;

/** How often the leader looks for a run that cannot make progress (three idle, unchanged looks fail it). */
const STALL_LOOK_MS = 5_000;

/** Replays: per thread, tasks are taken beyond the slots while their recorded work is under this (at most SHORT_MAX). */
const SHORT_BUDGET_SECONDS = 0.005;
const SHORT_MAX = 128;

/** Tasks per worker thread taken beyond the two it runs and queues, so that their inputs are fetched ahead. */
const PREFETCH = 2;

function chunkError(type: string, body: LayerBody): string | undefined {
  const wrong = checkChunk({ offset: body.offset, total: body.total, bytes: body.bytes });
  return wrong ? `${type} ${wrong}` : undefined;
}

function pick(cfg: WorkflowJobConfig) {
  return {
    ...(cfg.mode ? { mode: cfg.mode } : {}), ...(cfg.partitions ? { partitions: cfg.partitions } : {}), ...(cfg.units ? { units: cfg.units } : {}),
    ...(cfg.maxAttempts ? { maxAttempts: cfg.maxAttempts } : {}), ...(cfg.stealing !== undefined ? { stealing: cfg.stealing } : {}),
  };
}

export default defineJobKind({
  name: 'workflow',
  member,
  leader(ctx) {
    const own = ctx.member as WorkflowMember;
    const runDir = (ctx.spec.kindSpec as WorkflowJobConfig).run;
    /** The run's end, in its directory (for `workflow status` and `statistics`); a record, never a reason to fail. */
    const recordOutcome = (outcome: RunOutcome) => writeOutcome(runDir, outcome).catch(() => undefined);
    own.lead((outcome) => {
      void (async () => {
        if (!outcome.ok) {
          await recordOutcome({ status: 'failed', ended: new Date().toISOString(), error: outcome.error, completed: (await own.report()).reduce((n, m) => n + m.completed, 0) });
          return ctx.finish({ status: 'failed', error: outcome.error, finishedAt: Date.now() });
        }
        const members = await own.report();
        const value: WorkflowResult = { tasks: members.reduce((n, m) => n + m.completed, 0), members };
        await recordOutcome({ status: 'done', ended: new Date().toISOString(), completed: value.tasks });
        return ctx.finish({ status: 'done', value, finishedAt: Date.now(), completions: value.tasks });
      })();
    });
    return {
      stop: () => own.unlead(),
      async onControl(type) {
        if (type === 'progress') return own.report();
        if (type !== 'stop') throw new Error(`workflow: unknown request "${type}" (progress or stop)`);
        await own.stopAll();
        const members = await own.report();
        const value: WorkflowResult = { tasks: members.reduce((n, m) => n + m.completed, 0), members, stopped: true };
        await recordOutcome({ status: 'stopped', ended: new Date().toISOString(), completed: value.tasks });
        await ctx.finish({ status: 'done', value, finishedAt: Date.now(), completions: value.tasks });
        return { stopped: true };
      },
    };
  },
  validateMessage(body) {
    switch (body.type) {
      case 'wf-put': return Number.isInteger(body.id) && Number.isInteger(body.file) ? chunkError('wf-put', body) : 'wf-put needs id and file';
      case 'wf-put-ok': return Number.isInteger(body.id) && typeof body.location === 'object' ? undefined : 'wf-put-ok needs id and location';
      case 'wf-report?': return Number.isInteger(body.id) ? undefined : 'wf-report? needs id';
      case 'wf-pause':
      case 'wf-paused': return undefined;
      case 'wf-fetch': return Number.isInteger(body.id) && Number.isInteger(body.file) ? undefined : 'wf-fetch needs id and file';
      case 'wf-file': return !Number.isInteger(body.id) ? 'wf-file needs id' : body.missing === true ? undefined : chunkError('wf-file', body);
      case 'wf-report': return Number.isInteger(body.id) && typeof body.report === 'object' ? undefined : 'wf-report needs id and report';
      case 'wf-add?': return Number.isInteger(body.task) && typeof body.id === 'string' && Array.isArray(body.tasks) ? undefined : 'wf-add? needs task, id and tasks';
      case 'wf-grew': return undefined;
      default: return validateWorkflowMessage(body);
    }
  },
});
