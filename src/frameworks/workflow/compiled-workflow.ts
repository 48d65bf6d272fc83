/**
 * A large workflow file kept compiled beside the runs, so that a rerun — on the submitting side and
 * on every member — does not parse it again: `<state>/compiled/<hash of the file's path>.v8` holds
 * the loaded workflow (V8's structured serialization: typed arrays and plain data, no code; tasks and
 * files in slices, read one per turn of the event loop) with the
 * stamps (size, mtime, inode) of the file and of the sub-workflow files it includes. It is used only
 * while every stamp is as recorded and the V8 version is the same; anything else (a file edited or
 * touched, another Node.js) loads the file again and, on the submitting side, replaces the copy.
 * Small files (under COMPILED_MIN_TASKS tasks) are parsed every time: they load in milliseconds.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { loadWorkflow } from './load-workflow.js';
import type { Workflow } from './workflow.js';

/** Workflows with fewer tasks are not kept compiled. */
export const COMPILED_MIN_TASKS = 10_000;
/** Bumped when what is kept changes shape. */
const FORMAT = 2;

type Stamp = [path: string, size: number, mtimeNs: string, ino: string];

type Plain = Omit<Workflow, 'taskIndex' | 'lineOf' | 'contentKey'>;

/**
 * Tasks and files in slices serialized apart, read back one slice per turn of the event loop: a member
 * reading a million tasks must not block its ZooKeeper session's heartbeats for seconds.
 */
interface Kept {
  format: number;
  v8: string;
  stamps: Stamp[];
  workflow: Omit<Plain, 'tasks' | 'files'>;
  tasks: Uint8Array[];
  files: Uint8Array[];
}

const SLICE = 20_000;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function sliced<T>(items: T[]): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for (let i = 0; i < items.length; i += SLICE) {
    out.push(serialize(items.slice(i, i + SLICE)));
    await turn();
  }
  return out;
}

async function joined<T>(slices: Uint8Array[]): Promise<T[]> {
  const out: T[] = [];
  for (const slice of slices) {
    for (const item of deserialize(slice) as T[]) out.push(item);
    await turn();
  }
  return out;
}

function stampOf(path: string): Stamp | undefined {
  const st = statSync(path, { bigint: true, throwIfNoEntry: false });
  return st?.isFile() ? [path, Number(st.size), st.mtimeNs.toString(), st.ino.toString()] : undefined;
}

const sameStamp = (a: Stamp | undefined, b: Stamp) => a !== undefined && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];

export const compiledPath = (stateDir: string, file: string) => join(stateDir, 'compiled', `${createHash('sha256').update(resolve(file)).digest('hex').slice(0, 32)}.v8`);

const contentKeyOf = (stamps: Stamp[]) => createHash('sha256').update(JSON.stringify(stamps)).digest('hex').slice(0, 32);

/** The kept copy, if it is of this file as it is now (and of the files it includes). */
async function readKept(stateDir: string, file: string): Promise<Workflow | undefined> {
  let kept: Kept;
  try {
    kept = deserialize(readFileSync(compiledPath(stateDir, file))) as Kept;
    if (kept.format !== FORMAT || kept.v8 !== process.versions.v8 || kept.stamps[0]?.[0] !== resolve(file)) return undefined;
    if (!kept.stamps.every((s) => sameStamp(stampOf(s[0]), s))) return undefined;
    const plain: Plain = { ...kept.workflow, tasks: await joined(kept.tasks), files: await joined(kept.files) };
    return { ...(await revive(plain)), contentKey: contentKeyOf(kept.stamps) };
  } catch {
    return undefined;
  }
}

/** The functions a loaded workflow has, given back to a kept one. */
async function revive(plain: Plain): Promise<Workflow> {
  const byId = new Map<string, number>();
  for (let i = 0; i < plain.tasks.length; i++) {
    byId.set(plain.tasks[i]!.id, i);
    if (i % (5 * SLICE) === 0) await turn();
  }
  const lines = plain.taskLines;
  return {
    ...plain,
    taskIndex: (id) => byId.get(id) ?? -1,
    lineOf: (id) => {
      const t = byId.get(id);
      return t === undefined || !lines || lines[t] === 0 ? undefined : lines[t];
    },
  };
}

/**
 * Loads a workflow file through its compiled copy under `stateDir` when that is current; otherwise
 * parses it and (with `keep`, for files of at least COMPILED_MIN_TASKS tasks) writes the copy.
 */
export async function loadCompiled(file: string, stateDir: string, opts: { keep?: boolean } = {}): Promise<Workflow> {
  const before = stampOf(resolve(file));
  const kept = before ? await readKept(stateDir, file) : undefined;
  if (kept) return kept;
  const workflow = await loadWorkflow(file);
  if (opts.keep === false || workflow.tasks.length < COMPILED_MIN_TASKS || !before) return workflow;
  const stamps = [before, ...(workflow.includes ?? []).map(stampOf)];
  // Kept only if nothing changed while it was read (a file written meanwhile is read again next time).
  if (!sameStamp(stampOf(resolve(file)), before) || stamps.some((s) => s === undefined)) return workflow;
  const { taskIndex: _index, lineOf: _line, contentKey: _key, tasks, files, ...plain } = workflow;
  const path = compiledPath(stateDir, file);
  try {
    mkdirSync(join(stateDir, 'compiled'), { recursive: true });
    const kept: Kept = { format: FORMAT, v8: process.versions.v8, stamps: stamps as Stamp[], workflow: plain, tasks: await sliced(tasks), files: await sliced(files) };
    writeFileSync(`${path}.tmp`, serialize(kept));
    renameSync(`${path}.tmp`, path);
    workflow.contentKey = contentKeyOf(stamps as Stamp[]);
  } catch {
    // Not kept (a read-only state directory): the next run parses the file again.
  }
  return workflow;
}
