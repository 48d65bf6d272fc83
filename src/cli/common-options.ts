/** Options several commands share, declared once so that they read the same everywhere. */
import type { SettingsCommand } from './settings/settings-command.js';
import { DEFAULT_TIMEOUT, ZK_HELP, kinds } from './settings/kinds.js';
import { DASHBOARD_PORT } from './dashboard-option.js';
import { PROGRESS_LINE_MS } from './progress.js';
import { formatDuration } from './settings/durations.js';
import { SECRET_FILE_TO_READ, SECRET_FILE_TO_WRITE } from './options.js';

/** `--zk` and `--timeout`; with `required`, the command cannot run without `--zk` (`required` says why). */
export function zkOptions(cmd: SettingsCommand, what: string, required?: string): SettingsCommand {
  cmd.option('--zk <ensemble>', `${what}: ${ZK_HELP}`)
    .option('--timeout <duration>', 'how long to wait for ZooKeeper to answer: an address where none answers fails after it', DEFAULT_TIMEOUT);
  if (required !== undefined) cmd.requireSetting('zk', required);
  return cmd;
}

/**
 * `--secret-file`: the cluster secret for a command that changes the cluster ('write'), or for one that
 * reads it, the secret or a monitor credential ('read'); a string is the help text itself.
 */
export function secretOption(cmd: SettingsCommand, use: 'write' | 'read' | string): SettingsCommand {
  return cmd.option('--secret-file <file>', use === 'write' ? SECRET_FILE_TO_WRITE : use === 'read' ? SECRET_FILE_TO_READ : use);
}

export function jsonOption(cmd: SettingsCommand, what = 'print one JSON object'): SettingsCommand {
  return cmd.option('--json', what);
}

/** `--dashboard [port]`: the live dashboard of the cluster the command runs on, while it runs. */
export function dashboardOption(cmd: SettingsCommand): SettingsCommand {
  return cmd.setting('--dashboard [port]', `serve the live dashboard while it runs, on this port (default ${DASHBOARD_PORT}, or any free port if taken)`, kinds.optionalPort);
}

/** `--progress [every]` / `--no-progress`: a progress line on stderr. */
export function progressOption(cmd: SettingsCommand): SettingsCommand {
  return cmd
    .setting('--progress [every]', `write progress to stderr, also when it is not a terminal (then a line every ${formatDuration(PROGRESS_LINE_MS)}, or as often as given); the default on a terminal without --json`, kinds.optionalDuration)
    .option('--no-progress', 'no progress line');
}
