/**
 * A commander Command whose options are settings: each has a kind (settings/kinds.ts), so that the
 * command's settings form a JSON Schema (settings/command-schema.ts), and an environment variable.
 * Commands declare typed settings with `setting()`; a plain `option()` is a switch or text, and the
 * common settings (`zk`, `timeout`, …) take their shared kind whoever declares them.
 */
import { Command, Option } from 'commander';
import { COMMON, kinds, type ValueKind } from './kinds.js';

export const ENV_PREFIX = 'TIDEPOOL_';

/** Options that are never settings: they only make sense on the command line. */
export const COMMAND_LINE_ONLY: ReadonlySet<string> = new Set(['help', 'version', 'json']);

/** The option naming the configuration file: from the command line or $TIDEPOOL_CONFIG, never from a file. */
export const CONFIG_SETTING = 'config';

/** Older environment variables still honoured, after the regular one. */
export const ENV_ALIASES: Readonly<Record<string, readonly string[]>> = { logLevel: ['TIDEPOOL_LOG'] };

/** An old flag that still works for one release: its value goes to `key`, with a note on stderr. */
export interface DeprecatedFlag {
  option: Option;
  /** The setting it stands for. */
  key: string;
  /** How its value becomes the setting's (default: unchanged). */
  convert?: (value: unknown) => unknown;
}

const kindOf = new WeakMap<Option, ValueKind>();

/** `secretFile` → `SECRET_FILE`. */
export function snake(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/-/g, '_').toUpperCase();
}

/** The command's names from below the program down to it: `['coord', 'ls']`. */
export function commandPath(command: Command): string[] {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names;
}

/** The environment variable of setting `key` of `command`: common settings by name alone, others under their command. */
export function envVarName(command: Command, key: string): string {
  if (key === CONFIG_SETTING || Object.hasOwn(COMMON, key) || !command.parent) return ENV_PREFIX + snake(key);
  return ENV_PREFIX + [...commandPath(command), key].map(snake).join('_');
}

/** The kind of an option's values. */
export function optionKind(option: Option): ValueKind {
  return kindOf.get(option) ?? (option.required || option.optional ? (option.variadic ? kinds.list : kinds.text) : kinds.switch);
}

export class SettingsCommand extends Command {
  /** Settings the command cannot run without, with what to say when one is missing. */
  readonly requiredSettings = new Map<string, string>();
  readonly deprecatedFlags: DeprecatedFlag[] = [];
  /** Old names of this command still accepted for one release (`coordinator` for `monitor`). */
  readonly deprecatedNames = new Map<string, string>();
  /** The name the command was invoked by this run (one of its deprecated names, or its own). */
  invokedAs: string | undefined;

  override createCommand(name?: string): SettingsCommand {
    return new SettingsCommand(name);
  }

  override createOption(flags: string, description?: string): Option {
    const option = super.createOption(flags, description);
    const key = option.attributeName();
    const common = Object.hasOwn(COMMON, key) ? COMMON[key] : undefined;
    if (common) kindOf.set(option, common.kind);
    return COMMAND_LINE_ONLY.has(key) ? option : option.env(envVarName(this, key));
  }

  /** Adds an option whose values are of `kind`. */
  setting(flags: string, description: string, kind: ValueKind, defaultValue?: string | boolean): this {
    const option = this.createOption(flags, description);
    kindOf.set(option, kind);
    if (defaultValue !== undefined) option.default(defaultValue);
    return this.addOption(option);
  }

  /** Marks setting `key` as required; `why` ends the error when it is missing. */
  requireSetting(key: string, why: string): this {
    this.requiredSettings.set(key, why);
    return this;
  }

  /** An old flag, hidden from help, that sets `key` for one release. */
  deprecatedFlag(flags: string, key: string, convert?: (value: unknown) => unknown): this {
    const option = new Option(flags).hideHelp();
    this.deprecatedFlags.push({ option, key, ...(convert ? { convert } : {}) });
    return this.addOption(option);
  }

  /** An old name of this command, accepted for one release with a note (`tidepool coordinator` → `tidepool monitor`). */
  deprecatedName(name: string, note = ''): this {
    this.deprecatedNames.set(name, note);
    return this.alias(name);
  }
}

/** Whether `option` is one of `command`'s deprecated flags. */
export function isDeprecatedFlag(command: Command, option: Option): boolean {
  return command instanceof SettingsCommand && command.deprecatedFlags.some((d) => d.option === option);
}
