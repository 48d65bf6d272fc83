/**
 * The record of a workflow that is complete in a shared directory, keyed by the workflow's content
 * (the file's bytes, or the declarations of a workflow built in code) and the settings that decide
 * its outputs: `<state>/complete/<key>.json` lists the stamps of its inputs and final outputs. A rerun
 * whose inputs and final outputs are all as listed has nothing to do, decided without parsing the
 * workflow or fingerprinting its tasks (a million-task file is hashed, not loaded). Anything else
 * goes through the full plan (prepare-run.ts), which would decide the same. The files sub-workflow
 * jobs name are listed with their content hashes and checked too.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { statStamp, unchanged, type ChangeDetection, type FileStamp } from './file-stamp.js';
import { sharedPath } from './shared-path.js';

export interface CompleteRecord {
  workflow: string;
  tasks: number;
  run: string;
  inputs: [string, FileStamp][];
  outputs: [string, FileStamp][];
  /** Files the workflow's sub-workflow jobs were read from (absolute paths, stamps with their SHA-256). */
  sources?: [string, FileStamp][];
}

export interface KeySettings {
  replay?: number;
  detection: ChangeDetection;
  /** Anything else the outputs depend on (catalog files' contents). */
  extra?: string;
}

export function workflowKey(sourceHash: string, settings: KeySettings): string {
  return createHash('sha256').update(`${sourceHash}\u0000replay=${settings.replay ?? 'no'}\u0000${settings.detection}\u0000${settings.extra ?? ''}`).digest('hex').slice(0, 32);
}

const recordPath = (stateDir: string, key: string) => join(stateDir, 'complete', `${key}.json`);

/** The record, if the workflow with this key is complete and every file it lists is still as listed. */
export async function stillComplete(stateDir: string, key: string, shared: string, detection: ChangeDetection): Promise<CompleteRecord | undefined> {
  let record: CompleteRecord;
  try {
    record = JSON.parse(readFileSync(recordPath(stateDir, key), 'utf8')) as CompleteRecord;
  } catch {
    return undefined;
  }
  for (const [name, recorded] of [...record.inputs, ...record.outputs]) {
    const path = sharedPath(shared, name);
    const now = statStamp(path);
    if (!now || !(await unchanged(path, recorded, now, detection))) return undefined;
  }
  // A sub-workflow's file is part of the workflow's content (the key hashes only the including file).
  for (const [path, recorded] of record.sources ?? []) {
    const now = statStamp(path);
    if (!now || !(await unchanged(path, recorded, now, 'content'))) return undefined;
  }
  return record;
}

export function writeComplete(stateDir: string, key: string, record: CompleteRecord): void {
  const path = recordPath(stateDir, key);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(`${path}.tmp`, JSON.stringify(record));
  renameSync(`${path}.tmp`, path);
}
