/**
 * The configuration file (`--config FILE` or $TIDEPOOL_CONFIG): YAML (JSON is YAML too), one section
 * per command, nested for subcommands, holding that command's settings; at the top, and in the section
 * of a command group (`coord:`), only the common settings (settings/kinds.ts COMMON):
 *
 *   zk: zk://10.0.0.5:2181      # common: every command that talks to ZooKeeper
 *   node:
 *     workers: 4                # node's own
 *   coord:
 *     ls:
 *       depth: 3
 *
 * The whole file is checked when it is read (structure and every value against its command's schema),
 * whatever command runs; errors name FILE:LINE.
 */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type YAMLMap } from 'yaml';
import { UsageError } from '../errors.js';
import { checkCommonSettings, checkSettings, settingsOf } from './command-schema.js';
import { COMMON } from './kinds.js';
import { COMMAND_LINE_ONLY, CONFIG_SETTING, commandPath } from './settings-command.js';

/** One value from the file, with where it is. */
export interface ConfigEntry {
  value: unknown;
  line: number;
  /** `FILE:LINE: KEY`, how errors about the value start. */
  label: string;
}

interface Section {
  settings: Map<string, ConfigEntry>;
  sections: Map<string, Section>;
}

export class ConfigFile {
  constructor(readonly path: string, private readonly root: Section) {}

  /** The entries for the command at `path` (names below the program): the top level's, then each enclosing section's, innermost winning. */
  entriesFor(path: readonly string[]): Map<string, ConfigEntry> {
    const merged = new Map(this.root.settings);
    let section: Section | undefined = this.root;
    for (const name of path) {
      section = section.sections.get(name);
      if (!section) break;
      for (const [key, entry] of section.settings) merged.set(key, entry);
    }
    return merged;
  }
}

interface Reader {
  file: string;
  doc: Document;
  lineOf: (node: unknown, fallback?: number) => number;
}

/** Reads and checks a configuration file against `program`'s commands; `label` names where its name came from. */
export function loadConfigFile(file: string, label: string, program: Command): ConfigFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`${label}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  const syntax = doc.errors[0];
  if (syntax) {
    const message = syntax.code === 'MULTIPLE_DOCS'
      ? 'a configuration file holds one YAML document, and this "---" starts a second'
      : syntax.message.replace(/ at line \d+, column \d+:[\s\S]*$/, '');
    throw new UsageError(`${file}:${syntax.linePos?.[0].line ?? 1}: ${message}`);
  }
  const lineOf = (node: unknown, fallback = 1): number => {
    const range = (node as { range?: [number, number, number] } | null)?.range;
    return range ? lines.linePos(range[0]).line : fallback;
  };
  const contents = doc.contents;
  if (contents === null) return new ConfigFile(file, { settings: new Map(), sections: new Map() });
  if (!isMap(contents)) {
    throw new UsageError(`${file}:${lineOf(contents)}: the top level must be settings and sections written as "key: value", not ${describe(contents)}`);
  }
  return new ConfigFile(file, readSection(contents, program, { file, doc, lineOf }));
}

function readSection(map: YAMLMap, command: Command, reader: Reader): Section {
  const { file, lineOf } = reader;
  const section: Section = { settings: new Map(), sections: new Map() };
  // A command's own settings; a group (the program, `coord`) takes the common settings for what runs below it.
  const own = new Set(settingsOf(command).map((s) => s.key));
  const isGroup = command.commands.length > 0;
  const where = command.parent ? ` for ${commandPath(command).join(' ')}` : '';
  for (const pair of map.items) {
    const keyLine = lineOf(pair.key);
    if (!isScalar(pair.key)) throw new UsageError(`${file}:${keyLine}: a setting's name must be a plain word`);
    const key = String(pair.key.value);
    const valueNode = isAlias(pair.value) ? pair.value.resolve(reader.doc) : pair.value;
    const sub = command.commands.find((c) => c.name() === key || c.aliases().includes(key));
    if (sub) {
      if (!isMap(valueNode)) throw new UsageError(`${file}:${keyLine}: ${key}: the section of "${commandPath(sub).join(' ')}" must hold "key: value" settings`);
      section.sections.set(sub.name(), readSection(valueNode, sub, reader));
      continue;
    }
    if (key === CONFIG_SETTING) throw new UsageError(`${file}:${keyLine}: "${key}" cannot be set in a configuration file`);
    if (COMMAND_LINE_ONLY.has(key)) throw new UsageError(`${file}:${keyLine}: "${key}" can only be given on the command line`);
    if (!own.has(key) && !(isGroup && Object.hasOwn(COMMON, key))) throw new UsageError(`${file}:${keyLine}: ${unknownKey(command, key, isMap(valueNode), where)}`);
    const line = lineOf(valueNode, keyLine);
    const label = `${file}:${line}: ${key}`;
    let value: unknown;
    if (isSeq(valueNode) && valueNode.items.every((item) => isScalar(item))) value = valueNode.items.map((item) => (item as { value: unknown }).value);
    else if (valueNode !== null && valueNode !== undefined && !isScalar(valueNode)) throw new UsageError(`${label}: expected a single value, not ${describe(valueNode)}`);
    else value = valueNode?.value;
    if (value === null || value === undefined || value === '') throw new UsageError(`${label}: no value given`);
    section.settings.set(key, { value, line, label });
  }
  // Every value against the schema of the command it is for (the common ones against theirs).
  const kindOf = new Map(settingsOf(command).map((s) => [s.key, s.kind]));
  const values = Object.fromEntries([...section.settings].map(([key, e]) => [key, kindOf.get(key)?.prepare?.(e.value) ?? e.value]));
  const labelOf = (key: string) => section.settings.get(key)!.label;
  const common = Object.fromEntries(Object.entries(values).filter(([key]) => !own.has(key)));
  checkCommonSettings(common, labelOf);
  if (own.size > 0) checkSettings(command, Object.fromEntries(Object.entries(values).filter(([key]) => own.has(key))), labelOf, true);
  return section;
}

function unknownKey(command: Command, key: string, isSection: boolean, where: string): string {
  const names = command.commands.map((c) => c.name()).sort();
  if (isSection && names.length > 0) return `unknown command "${[...commandPath(command), key].join(' ')}" (commands${where}: ${names.join(', ')})`;
  const users = commandsWith(command, key);
  if (command.commands.length > 0 && users.length > 0) {
    return `"${key}" is not a common setting: put it in the section of the command it is for (${users.join(', ')}); common settings: ${Object.keys(COMMON).sort().join(', ')}`;
  }
  const known = command.commands.length > 0 ? Object.keys(COMMON) : settingsOf(command).map((s) => s.key);
  return `unknown setting "${key}"${where} (known: ${[...new Set(known)].sort().join(', ')})`;
}

/** The commands below `command` that have setting `key`, as `section:` paths (`workflow: run:`). */
function commandsWith(command: Command, key: string): string[] {
  const out: string[] = [];
  const walk = (c: Command) => {
    if (settingsOf(c).some((s) => s.key === key)) out.push(commandPath(c).map((n) => `${n}:`).join(' '));
    c.commands.forEach(walk);
  };
  command.commands.forEach(walk);
  return out;
}

function describe(node: unknown): string {
  return isSeq(node) ? 'a list' : isMap(node) ? 'a mapping' : 'a single value';
}
