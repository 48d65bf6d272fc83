/**
 * A run's directory, under the shared directory's state directory (`<shared>/.tidepool` unless
 * given): `runs/<run id>/` holds `run.json` (what was run, when, with which input stamps),
 * `plan.json` (for the members: every task's fingerprint, which tasks are up to date, which files
 * are present at the start), `journal/` (one file per member), `logs/` (each task's stdout and
 * stderr) and `provenance/` (a record per task attempt, one file per member). Run ids begin with
 * their start time, so that they sort in the order the runs started.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { FileStamp } from './file-stamp.js';

export const stateDirOf = (shared: string, stateDir?: string) => resolve(stateDir ?? join(shared, '.tidepool'));

/** `20261125-120304.123-1a2b3c`: UTC start time to the millisecond, then random digits (two runs started together differ). */
export function newRunId(now = new Date()): string {
  const iso = now.toISOString();
  return `${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 23).replace(/:/g, '')}-${randomBytes(3).toString('hex')}`;
}

export interface RunInfo {
  run: string;
  workflow: string;
  format: string;
  source: string;
  shared: string;
  started: string;
  tasks: number;
  toRun: number;
  upToDate: number;
  replay?: number;
  /** How changed inputs were told apart (content: their stamps hold a SHA-256). */
  detection?: 'mtime' | 'content';
  /** Stamps of the workflow inputs as this run found them (to say later which one changed). */
  inputs: Record<string, FileStamp>;
}

/** What every member reads at the start: fingerprints, up-to-date tasks and files already present. */
export interface MemberPlan {
  fingerprints: string[];
  upToDate: Uint8Array;
  saved: number[];
}

export function createRunDir(stateDir: string, info: Omit<RunInfo, 'run'>, plan: MemberPlan): string {
  const run = newRunId();
  const dir = join(stateDir, 'runs', run);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'run.json'), `${JSON.stringify({ run, ...info }, null, 1)}\n`);
  // Fingerprints as one string of 32-digit pieces, up-to-date tasks as a bit set: a million tasks in a few tens of MB.
  const bits = new Uint8Array(Math.ceil(plan.upToDate.length / 8));
  plan.upToDate.forEach((v, t) => {
    if (v) bits[t >> 3]! |= 1 << (t & 7);
  });
  writeFileSync(join(dir, 'plan.json'), JSON.stringify({ tasks: plan.fingerprints.length, fingerprints: plan.fingerprints.join(''), upToDate: Buffer.from(bits).toString('base64'), saved: plan.saved }));
  return dir;
}

export function readRunInfo(runDir: string): RunInfo {
  return JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')) as RunInfo;
}

/** The plan a member reads; refused if it is not the plan of a workflow of `tasks` tasks. */
export function readMemberPlan(runDir: string, tasks: number): MemberPlan {
  const raw = JSON.parse(readFileSync(join(runDir, 'plan.json'), 'utf8')) as { tasks: number; fingerprints: string; upToDate: string; saved: number[] };
  if (raw.tasks !== tasks || raw.fingerprints.length !== 32 * tasks) throw new Error(`${join(runDir, 'plan.json')}: a plan for ${raw.tasks} tasks, but the workflow has ${tasks}`);
  const fingerprints: string[] = new Array(tasks);
  for (let t = 0; t < tasks; t++) fingerprints[t] = raw.fingerprints.slice(32 * t, 32 * t + 32);
  const bits = Buffer.from(raw.upToDate, 'base64');
  const upToDate = new Uint8Array(tasks);
  for (let t = 0; t < tasks; t++) upToDate[t] = (bits[t >> 3]! >> (t & 7)) & 1;
  return { fingerprints, upToDate, saved: raw.saved };
}

export const logsDir = (runDir: string) => join(runDir, 'logs');
export const provenanceDir = (runDir: string) => join(runDir, 'provenance');
