/**
 * Where a setting's value comes from, strongest first: the command line, the environment, the
 * configuration file (`--config FILE` or $TIDEPOOL_CONFIG), the option's default. Commander parses the
 * command line; `applySettings` (run before a command's action) takes the rest, checks everything the
 * command will use against the command's schema — errors name the flag, the variable or FILE:LINE —
 * and hands the action typed values (numbers, milliseconds, parsed plans).
 */
import type { Command } from 'commander';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { checkSettings, settingsOf, type Setting } from './command-schema.js';
import { loadConfigFile, type ConfigFile } from './config-file.js';
import { deprecated, warnOnce } from './deprecations.js';
import { COMMON } from './kinds.js';
import { CONFIG_SETTING, ENV_ALIASES, ENV_PREFIX, SettingsCommand, commandPath, envVarName, snake } from './settings-command.js';

type Source = 'cli' | 'env' | 'config' | 'default';

interface Given {
  value: unknown;
  label: string;
  source: Source;
  baseDir?: string;
}

const oldForms = new WeakMap<Command, Set<string>>();

/** Whether `key` of `command` was given in an old form this run (a duration without a unit, say). */
export function givenInOldForm(command: Command, key: string): boolean {
  return oldForms.get(command)?.has(key) ?? false;
}

/**
 * Applies the environment and the configuration file to the settings of `actionCommand` and its
 * ancestors up to `program`, checks them, and sets them back typed. Returns where each setting given
 * by any source but a default came from (setting → flag, variable or FILE:LINE).
 */
export function applySettings(program: Command, actionCommand: Command): Record<string, string> {
  const commands: Command[] = [];
  for (let c: Command | null = actionCommand; c; c = c.parent) {
    commands.unshift(c);
    if (c === program) break;
  }
  const origins: Record<string, string> = {};
  const file = program.getOptionValue(CONFIG_SETTING) as string | undefined;
  let config: ConfigFile | undefined;
  if (file !== undefined && file !== '') {
    const label = program.getOptionValueSource(CONFIG_SETTING) === 'env' ? envVarName(program, CONFIG_SETTING) : `--${CONFIG_SETTING}`;
    config = loadConfigFile(file, label, program);
    origins[CONFIG_SETTING] = label;
  }
  const entries = config?.entriesFor(commandPath(actionCommand)) ?? new Map();
  const baseDir = file ? dirname(resolve(file)) : undefined;

  for (const cmd of commands) {
    const given = new Map<string, Given>();
    for (const d of cmd instanceof SettingsCommand ? cmd.deprecatedFlags : []) {
      const oldKey = d.option.attributeName();
      if (cmd.getOptionValueSource(oldKey) !== 'cli') continue;
      const target = cmd.options.find((o) => o.attributeName() === d.key && !o.negate);
      if (cmd.getOptionValueSource(d.key) === 'cli') throw new UsageError(`${d.option.long} is the old name of ${target?.long}: give one of them`);
      deprecated(`${d.option.long} is now ${target?.long}`);
      const value: unknown = cmd.getOptionValue(oldKey);
      given.set(d.key, { value: d.convert ? d.convert(value) : value, label: d.option.long ?? oldKey, source: 'cli' });
    }
    for (const setting of settingsOf(cmd)) {
      if (given.has(setting.key)) continue;
      const value = valueOf(cmd, setting, entries.get(setting.key), baseDir);
      if (value) given.set(setting.key, value);
      else cmd.setOptionValueWithSource(setting.key, undefined, undefined);
      noteOldVariable(cmd, setting);
    }
    const kindOf = new Map(settingsOf(cmd).map((s) => [s.key, s.kind]));
    const values = Object.fromEntries([...given].map(([key, g]) => [key, kindOf.get(key)?.prepare?.(g.value) ?? g.value]));
    checkSettings(cmd, values, (key) => given.get(key)?.label ?? key);
    for (const [key, g] of given) {
      const kind = kindOf.get(key)!;
      let value = values[key];
      if (kind.decode && typeof value !== 'boolean') {
        try {
          value = kind.decode(value, {
            label: g.label, ...(g.source === 'config' && g.baseDir !== undefined ? { baseDir: g.baseDir } : {}),
            deprecated: (note) => {
              deprecated(note);
              oldForms.set(cmd, (oldForms.get(cmd) ?? new Set()).add(key));
            },
          });
        } catch (err) {
          throw new UsageError(`${g.label}: ${(err as Error).message}`);
        }
      }
      cmd.setOptionValueWithSource(key, value, g.source);
      if (g.source !== 'default') origins[key] = g.source === 'config' ? g.label.replace(/: [^:]*$/, '') : g.label;
    }
  }
  return origins;
}

function valueOf(cmd: Command, { key, options }: Setting, entry: { value: unknown; label: string } | undefined, baseDir: string | undefined): Given | undefined {
  if (cmd.getOptionValueSource(key) === 'cli') {
    const flag = options.find((o) => !o.negate) ?? options[0]!;
    return { value: cmd.getOptionValue(key), label: flag.long ?? key, source: 'cli' };
  }
  // An empty variable counts as unset.
  const names = [envVarName(cmd, key), ...(Object.hasOwn(ENV_ALIASES, key) ? ENV_ALIASES[key]! : [])];
  const name = names.find((n) => (process.env[n] ?? '') !== '');
  if (name !== undefined) return { value: process.env[name], label: name, source: 'env' };
  if (entry) return { value: entry.value, label: entry.label, source: 'config', ...(baseDir !== undefined ? { baseDir } : {}) };
  // `--no-prune` alone defaults to true; beside `--progress` it only switches it off.
  const fallback: unknown = options.find((o) => o.defaultValue !== undefined)?.defaultValue ?? (options.every((o) => o.negate) ? true : undefined);
  if (fallback === undefined) return undefined;
  const flag = options.find((o) => !o.negate) ?? options[0]!;
  return { value: fallback, label: `the default of ${flag.long ?? key}`, source: 'default' };
}

/** Before settings were per command, `TIDEPOOL_WORKERS` set every command's workers: say it is no longer read. */
function noteOldVariable(cmd: Command, { key }: Setting): void {
  if (!cmd.parent || Object.hasOwn(COMMON, key)) return;
  const old = ENV_PREFIX + snake(key);
  if ((process.env[old] ?? '') === '' || old === envVarName(cmd, key)) return;
  warnOnce(`${old} is not read any more: a command's own settings are named after it, here ${envVarName(cmd, key)} (docs/configuration.md)`);
}
