/**
 * Validation of a WfFormat 1.5 document against the published schema, fast enough for a million
 * tasks. The three big arrays (specification tasks and files, execution tasks) are checked item by
 * item with hand-written tests that accept only what the schema accepts (a stricter subset: an item
 * they do not recognise goes to ajv, compiled for that item's schema); the rest of the document, with
 * one item of each big array left in it, goes to ajv whole. Whenever anything is refused, ajv
 * validates the whole document again: its verdict and its first error are the answer, so a refusal
 * reads exactly as ajv words it and nothing the schema allows is refused.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { packageRoot } from '../../util/package-info.js';
import { ajv as loadAjv } from './workflow-dependencies.js';

/** The schema ships in the package's data/ (THIRD_PARTY_NOTICES: LGPL-3.0, unmodified). */
const SCHEMA_FILE = ['data', 'workflows', 'wfcommons-schema.v1.5.json'];

type Json = Record<string, unknown>;
type Schema = Record<string, unknown>;

interface Validators {
  whole: ValidateFunction;
  specTask: ValidateFunction;
  specFile: ValidateFunction;
  execTask: ValidateFunction;
  /** Character tables of the id patterns (`^[…]*$`), or undefined if a pattern has another form. */
  taskRef: Uint8Array | undefined;
  fileRef: Uint8Array | undefined;
}

let validators: Validators | undefined;

function compile(): Validators {
  const Ajv = loadAjv();
  const schema = JSON.parse(readFileSync(path.join(packageRoot(), ...SCHEMA_FILE), 'utf8')) as Schema;
  delete schema.$schema; // "http://json-schema.org/schema#" names no draft; its keywords are draft-07's
  const ajv = new Ajv({ allErrors: false, strict: false, validateFormats: false });
  const at = (...path: string[]) => path.reduce<Schema>((s, key) => s[key] as Schema, schema);
  const specTask = at('properties', 'workflow', 'properties', 'specification', 'properties', 'tasks', 'items');
  const specFile = at('properties', 'workflow', 'properties', 'specification', 'properties', 'files', 'items');
  const execTask = at('properties', 'workflow', 'properties', 'execution', 'properties', 'tasks', 'items');
  const pattern = (item: Schema, list: string) => ((item.properties as Schema)[list] as { items: { pattern: string } }).items.pattern;
  return {
    whole: ajv.compile(schema), specTask: ajv.compile(specTask), specFile: ajv.compile(specFile), execTask: ajv.compile(execTask),
    taskRef: characterTable(pattern(specTask, 'parents')), fileRef: characterTable(pattern(specTask, 'inputFiles')),
  };
}

/** For a pattern `^[class]*$`: which ASCII characters the class admits, asked of the pattern itself. */
function characterTable(pattern: string): Uint8Array | undefined {
  if (!/^\^\[[^\]]*\]\*\$$/.test(pattern)) return undefined;
  const re = new RegExp(pattern, 'u'); // as ajv compiles it (unicodeRegExp)
  const table = new Uint8Array(128);
  for (let c = 0; c < 128; c++) table[c] = re.test(String.fromCharCode(c)) ? 1 : 0;
  return table;
}

/** Every character ASCII and in the table (anything else is left to ajv). */
function matches(s: string, table: Uint8Array): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || table[c] === 0) return false;
  }
  return true;
}

function isObject(x: unknown): x is Json {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

const nonEmpty = (x: unknown) => typeof x === 'string' && x.length > 0;

/** A list of ids: an array of strings of the pattern, non-empty ones if `minOne`. Absent is fine when `optional`. */
function idList(x: unknown, table: Uint8Array, minOne: boolean, optional: boolean): boolean {
  if (x === undefined) return optional;
  if (!Array.isArray(x)) return false;
  for (let i = 0; i < x.length; i++) {
    const s: unknown = x[i];
    if (typeof s !== 'string' || (minOne && s.length === 0) || !matches(s, table)) return false;
  }
  return true;
}

function specTaskOk(t: unknown, v: Validators): boolean {
  if (!isObject(t) || !nonEmpty(t.name) || !nonEmpty(t.id)) return false;
  return idList(t.parents, v.taskRef!, false, false) && idList(t.children, v.taskRef!, false, false) &&
    idList(t.inputFiles, v.fileRef!, true, true) && idList(t.outputFiles, v.fileRef!, true, true);
}

function specFileOk(f: unknown, v: Validators): boolean {
  return isObject(f) && typeof f.id === 'string' && f.id.length > 0 && matches(f.id, v.fileRef!) && Number.isInteger(f.sizeInBytes) && (f.sizeInBytes as number) >= 0;
}

/** The usual execution record (id, runtime, a simple command); any other recorded property goes to ajv. */
function execTaskOk(e: unknown): boolean {
  if (!isObject(e) || !nonEmpty(e.id) || typeof e.runtimeInSeconds !== 'number' || !Number.isFinite(e.runtimeInSeconds)) return false;
  if (e.executedAt !== undefined || e.coreCount !== undefined || e.avgCPU !== undefined || e.readBytes !== undefined || e.writtenBytes !== undefined ||
    e.memoryInBytes !== undefined || e.energyInKWh !== undefined || e.avgPowerInW !== undefined || e.priority !== undefined || e.machines !== undefined) return false;
  const c = e.command;
  if (c === undefined) return true;
  if (!isObject(c) || (c.program !== undefined && !nonEmpty(c.program))) return false;
  if (c.arguments === undefined) return true;
  if (!Array.isArray(c.arguments)) return false;
  for (const a of c.arguments as unknown[]) if (!nonEmpty(a)) return false;
  return true;
}

/** Item checks for documents read piece by piece: each accepts only what the schema accepts. */
export interface WfFormatChecks {
  specTask(item: unknown): boolean;
  specFile(item: unknown): boolean;
  execTask(item: unknown): boolean;
  /** The document with its big arrays cut to their first items. */
  rest(doc: unknown): boolean;
}

/** undefined if the schema's id patterns have an unexpected form (then only whole documents are checked). */
export function wfFormatChecks(): WfFormatChecks | undefined {
  const v = (validators ??= compile());
  if (!v.taskRef || !v.fileRef) return undefined;
  return {
    specTask: (t) => specTaskOk(t, v) || v.specTask(t),
    specFile: (f) => specFileOk(f, v) || v.specFile(f),
    execTask: (e) => execTaskOk(e) || v.execTask(e),
    rest: (doc) => v.whole(doc),
  };
}

function itemsOk(list: unknown[], ok: (x: unknown) => boolean): boolean {
  for (let i = 0; i < list.length; i++) if (!ok(list[i])) return false;
  return true;
}

/** The document with each big array cut to its first item (its other items are checked apart). */
function withoutBigArrays(root: Json): Json | undefined {
  const wf = root.workflow;
  if (!isObject(wf) || !isObject(wf.specification) || !Array.isArray(wf.specification.tasks)) return undefined;
  const spec = wf.specification;
  if (spec.files !== undefined && !Array.isArray(spec.files)) return undefined;
  const exec = wf.execution;
  if (exec !== undefined && !(isObject(exec) && Array.isArray(exec.tasks))) return undefined;
  return {
    ...root,
    workflow: {
      ...wf,
      specification: { ...spec, tasks: (spec.tasks as unknown[]).slice(0, 1), ...(spec.files !== undefined ? { files: (spec.files as unknown[]).slice(0, 1) } : {}) },
      ...(exec !== undefined ? { execution: { ...exec, tasks: (exec.tasks as unknown[]).slice(0, 1) } } : {}),
    },
  };
}

function quickly(root: Json): boolean {
  const checks = wfFormatChecks();
  const rest = withoutBigArrays(root);
  if (!checks || !rest || !checks.rest(rest)) return false;
  const wf = root.workflow as { specification: { tasks: unknown[]; files?: unknown[] }; execution?: { tasks: unknown[] } };
  return itemsOk(wf.specification.tasks, checks.specTask) && itemsOk(wf.specification.files ?? [], checks.specFile) && itemsOk(wf.execution?.tasks ?? [], checks.execTask);
}

/** undefined if `root` is a valid WfFormat 1.5 document; otherwise ajv's first error about it. */
export function wfFormatSchemaError(root: unknown): ErrorObject | undefined {
  validators ??= compile();
  if (isObject(root) && quickly(root)) return undefined;
  if (validators.whole(root)) return undefined;
  return validators.whole.errors![0]!;
}
