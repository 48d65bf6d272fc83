import { Command, type Option } from 'commander';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type YAMLMap } from 'yaml';
import { UsageError } from './errors.js';
import {
  CONFIG_SETTING, COMMAND_LINE_ONLY, ENV_ALIASES, checkSetting, envVarName, parseBoolean, readableFile, settingKind,
} from './settings.js';

/**
 * Where option values come from, strongest first: the command line, the environment
 * (`TIDEPOOL_<NAME>`), the configuration file (`--config FILE` or `$TIDEPOOL_CONFIG`), the
 * option's default. Commander handles the first two and the defaults; `applySettings` (run in the
 * preAction hook) checks environment values, naming the variable in errors, and fills in the
 * configuration file's values for options still at their default, naming `FILE:LINE` in errors.
 * Values reach the command's action as the same strings a flag would give.
 */

/** A commander Command whose options (and those of its subcommands) also read `TIDEPOOL_<NAME>`. */
export class SettingsCommand extends Command {
  override createCommand(name?: string): Command {
    return new SettingsCommand(name);
  }

  override createOption(flags: string, description?: string): Option {
    const option = super.createOption(flags, description);
    const key = option.attributeName();
    return COMMAND_LINE_ONLY.has(key) ? option : option.env(envVarName(key));
  }
}

/** One value from the configuration file, with the label its errors start with (`FILE:LINE: KEY`). */
export interface ConfigEntry {
  value: unknown;
  line: number;
  label: string;
}

interface Section {
  settings: Map<string, ConfigEntry>;
  sections: Map<string, Section>;
}

/** A parsed and checked configuration file. */
export class ConfigFile {
  constructor(readonly path: string, private readonly root: Section) {}

  /** The settings for the command at `path` (names below the program): top level, overridden by each enclosing section. */
  settingsFor(path: readonly string[]): Map<string, ConfigEntry> {
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

/**
 * Reads and checks a configuration file against `program`'s commands and options: YAML syntax,
 * a mapping at the top, sections only for existing commands, keys only for existing settings,
 * values of the right kind. `label` names where the file name came from (`--config`).
 */
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
    throw new UsageError(`${file}:${lineOf(contents)}: the top level must be settings written as "key: value", not ${describe(contents)}`);
  }
  return new ConfigFile(file, readSection(contents, program, { file, doc, lineOf }));
}

interface Reader {
  file: string;
  doc: Document;
  lineOf: (node: unknown, fallback?: number) => number;
}

function readSection(map: YAMLMap, command: Command, reader: Reader): Section {
  const { file, lineOf } = reader;
  const section: Section = { settings: new Map(), sections: new Map() };
  const known = knownSettings(command);
  for (const pair of map.items) {
    const keyLine = lineOf(pair.key);
    if (!isScalar(pair.key)) throw new UsageError(`${file}:${keyLine}: a setting's name must be a plain word`);
    const key = String(pair.key.value);
    const valueNode = isAlias(pair.value) ? pair.value.resolve(reader.doc) : pair.value;
    // A key can name both a command and a setting (`scale`): a mapping is the command's section.
    const sub = command.commands.find((c) => c.name() === key || c.aliases().includes(key));
    if (sub && (isMap(valueNode) || !known.has(key))) {
      if (!isMap(valueNode)) throw new UsageError(`${file}:${keyLine}: ${key}: a section for the "${commandPath(sub)}" command must hold "key: value" settings`);
      section.sections.set(sub.name(), readSection(valueNode, sub, reader));
      continue;
    }
    if (key === CONFIG_SETTING) throw new UsageError(`${file}:${keyLine}: "${key}" cannot be set in a configuration file`);
    if (COMMAND_LINE_ONLY.has(key)) throw new UsageError(`${file}:${keyLine}: "${key}" can only be given on the command line`);
    const where = command.parent ? ` for ${commandPath(command)}` : '';
    const shape = known.get(key);
    if (!shape) {
      if (isMap(valueNode)) {
        const names = command.commands.map((c) => c.name()).sort();
        throw new UsageError(`${file}:${keyLine}: unknown command "${commandPath(command, key)}" (commands${where}: ${names.join(', ')})`);
      }
      throw new UsageError(`${file}:${keyLine}: unknown setting "${key}"${where} (known: ${[...known.keys()].sort().join(', ')})`);
    }
    const line = lineOf(valueNode, keyLine);
    const label = `${file}:${line}: ${key}`;
    if (valueNode !== null && valueNode !== undefined && !isScalar(valueNode)) {
      throw new UsageError(`${label}: expected a single value, not ${describe(valueNode)}`);
    }
    const value = valueNode?.value;
    if (value === null || value === undefined) throw new UsageError(`${label}: no value given`);
    checkValue(key, shape, value, label);
    section.settings.set(key, { value, line, label });
  }
  return section;
}

/**
 * Applies the environment and the configuration file to the options of `actionCommand` and its
 * ancestors (up to `program`) that the command line left unset, checking their values first.
 * Returns where each option given by any source came from (option name → flag, variable or FILE:LINE).
 */
export function applySettings(program: Command, actionCommand: Command): Record<string, string> {
  const commands: Command[] = [];
  for (let c: Command | null = actionCommand; c; c = c.parent) {
    commands.unshift(c);
    if (c === program) break;
  }
  const origins: Record<string, string> = {};
  const settable = ({ cmd, key }: Setting, ...sources: string[]) => {
    const source = cmd.getOptionValueSource(key);
    return source === undefined || source === 'default' || sources.includes(source);
  };

  // The environment: commander has already read each option's own variable; check the value (and
  // read aliases and options built without `SettingsCommand`). An empty variable counts as unset.
  for (const setting of settingsOf(commands)) {
    const { cmd, key, options } = setting;
    if (cmd.getOptionValueSource(key) === 'cli') origins[key] = options.map((o) => o.long ?? o.flags).join('/');
    if (!settable(setting, 'env')) continue;
    const names = [...options.map((o) => o.envVar ?? envVarName(key)), ...(Object.hasOwn(ENV_ALIASES, key) ? ENV_ALIASES[key]! : [])];
    const name = names.find((n) => (process.env[n] ?? '') !== '');
    if (name === undefined) {
      if (cmd.getOptionValueSource(key) === 'env') {
        // Commander took the empty variable: back to the option's default.
        const fallback: unknown = options.find((o) => o.defaultValue !== undefined)?.defaultValue ?? (options.some((o) => o.negate) ? true : undefined);
        cmd.setOptionValueWithSource(key, fallback, fallback === undefined ? undefined : 'default');
      }
      continue;
    }
    cmd.setOptionValueWithSource(key, settingValue(setting, process.env[name], name), 'env');
    origins[key] = name;
  }

  // The configuration file.
  const file = program.getOptionValue(CONFIG_SETTING) as string | undefined;
  if (file === undefined) return origins;
  const label = program.getOptionValueSource(CONFIG_SETTING) === 'env' ? envVarName(CONFIG_SETTING) : `--${CONFIG_SETTING}`;
  const config = loadConfigFile(file, label, program);
  origins[CONFIG_SETTING] = label;
  const entries = config.settingsFor(commands.slice(1).map((c) => c.name()));
  for (const setting of settingsOf(commands)) {
    const entry = entries.get(setting.key);
    if (entry === undefined || !settable(setting)) continue;
    setting.cmd.setOptionValueWithSource(setting.key, settingValue(setting, entry.value, entry.label, dirname(resolve(file))), 'config');
    origins[setting.key] = `${file}:${entry.line}`;
  }
  return origins;
}

/** The options of one command that set one attribute (`--dashboard <port>` and `--no-dashboard` both set `dashboard`). */
interface Setting {
  cmd: Command;
  key: string;
  options: Option[];
}

/** Whether a setting takes a value (`--port <port>`), can be switched on or off (`--json`, `--no-prune`, `--dashboard [port]`), or both. */
interface Shape {
  valued: boolean;
  switchable: boolean;
}

function shapeOf(options: readonly Option[]): Shape {
  return { valued: options.some((o) => o.required || o.optional), switchable: options.some((o) => !o.required) };
}

/** Checks a value from the environment or a file: a boolean for a switch, else its text (the same string a flag would give). */
function checkValue(key: string, shape: Shape, raw: unknown, label: string): boolean | string {
  if (!shape.valued) return parseBoolean(raw, label);
  if (shape.switchable && (typeof raw === 'boolean' || raw === 'true' || raw === 'false')) return raw === true || raw === 'true';
  return checkSetting(settingKind(key), String(raw), label);
}

/** The value an option gets from `raw`: `checkValue`, then a file must be readable (relative to `baseDir`), then the option's own parser. */
function settingValue({ cmd, key, options }: Setting, raw: unknown, label: string, baseDir?: string): unknown {
  let value = checkValue(key, shapeOf(options), raw, label);
  if (typeof value === 'boolean') return value;
  if (settingKind(key) === 'file') value = readableFile(baseDir === undefined ? value : resolve(baseDir, value), label);
  const parse = options.find((o) => o.required || o.optional)?.parseArg;
  if (!parse) return value;
  try {
    return parse(value, cmd.getOptionValue(key) as unknown);
  } catch (err) {
    throw new UsageError(`${label}: ${(err as Error).message}`);
  }
}

/** The settings of `commands`: their options, grouped by attribute, except those only for the command line. */
function* settingsOf(commands: readonly Command[]): Generator<Setting> {
  for (const cmd of commands) {
    const byKey = new Map<string, Option[]>();
    for (const option of cmd.options) {
      const key = option.attributeName();
      if (COMMAND_LINE_ONLY.has(key) || key === CONFIG_SETTING) continue;
      byKey.set(key, [...(byKey.get(key) ?? []), option]);
    }
    for (const [key, options] of byKey) yield { cmd, key, options };
  }
}

/** Settings that may appear in `command`'s part of a file (its own, its ancestors' and its subcommands'), with their shapes. */
function knownSettings(command: Command): Map<string, Shape> {
  const commands: Command[] = [];
  for (let c = command.parent; c; c = c.parent) commands.push(c);
  const below = (c: Command): void => {
    commands.push(c);
    c.commands.forEach(below);
  };
  below(command);
  const options = new Map<string, Option[]>();
  for (const { key, options: own } of settingsOf(commands)) options.set(key, [...(options.get(key) ?? []), ...own]);
  return new Map([...options].map(([key, list]) => [key, shapeOf(list)]));
}

function commandPath(command: Command, extra?: string): string {
  const names: string[] = extra === undefined ? [] : [extra];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

function describe(node: unknown): string {
  return isSeq(node) ? 'a list' : isMap(node) ? 'a mapping' : 'a single value';
}
