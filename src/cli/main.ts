import { CommanderError, type Command } from 'commander';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { log, parseLevel, setLogFormat, setLogLevel, LOG_LEVELS } from '../util/log.js';
// Every tidepool process knows every built-in job kind (a node runs jobs of any kind).
import '../frameworks/builtin-kinds.js';
import { registerClusterCommands } from './commands/cluster.js';
import { registerCoordCommands } from './commands/coord.js';
import { registerMonitorCommand } from './commands/monitor.js';
import { registerManagerCommands } from './commands/manager.js';
import { registerDemo } from './commands/demo.js';
import { registerNodeCommand } from './commands/node.js';
import { registerResultCommand } from './commands/result.js';
import { registerProvisionCommand } from './commands/provision.js';
import { registerUpCommands } from './commands/up.js';
import { registerDeployCommands } from './commands/deploy.js';
import { registerSolveCommand } from './commands/solve.js';
import { registerMalleableCommand } from './commands/malleable.js';
import { registerIterateCommand } from './commands/iterate.js';
import { registerSecretCommands } from './commands/secret.js';
import { registerServeCommand } from './commands/serve.js';
import { registerWorkflowCommands } from './commands/workflow.js';
import { registerZkTunnelCommand } from './commands/zk-tunnel.js';
import { reportError } from './errors.js';
import { applySettings } from './settings/apply-settings.js';
import { deprecated } from './settings/deprecations.js';
import { kinds } from './settings/kinds.js';
import { SettingsCommand } from './settings/settings-command.js';

/** The package version, from the nearest package.json above this module (sources or dist). */
function version(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      return (JSON.parse(readFileSync(fileURLToPath(new URL('package.json', dir)), 'utf8')) as { version: string }).version;
    } catch {
      if (dir.pathname === '/') return 'unknown';
    }
  }
}

export function buildProgram(): SettingsCommand {
  const program = new SettingsCommand('tidepool')
    .description('Elastic task-parallel runtime: run one program on a laptop\'s cores or on a cluster that grows and shrinks mid-run.')
    .version(version())
    .setting('--log-level <level>', `log level: ${LOG_LEVELS.join(', ')}`, kinds.logLevel, 'warn')
    .setting('--log-format <format>', 'log line format: text, or json (one JSON object per line)', kinds.logFormat, 'text')
    .option('--config <file>', 'settings file (YAML or JSON), a section per command; flags and TIDEPOOL_* variables override it (see docs/configuration.md)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .hook('preSubcommand', (cmd, sub) => {
      if (!(sub instanceof SettingsCommand)) return;
      const typed = cmd.args[0];
      sub.invokedAs = typed;
      if (typed !== undefined && sub.deprecatedNames.has(typed)) deprecated(`tidepool ${typed} is now tidepool ${sub.name()}${sub.deprecatedNames.get(typed)}`);
    })
    .hook('preAction', (cmd, actionCommand) => {
      // Flags, then TIDEPOOL_* variables, then the --config file, then defaults; checked here.
      const origins = applySettings(cmd, actionCommand);
      const { logLevel: level, logFormat: format } = cmd.opts<{ logLevel: string; logFormat: 'text' | 'json' }>();
      setLogLevel(parseLevel(level)!);
      setLogFormat(format);
      log.debug('config', 'settings given', origins);
    });
  registerDemo(program);
  registerSolveCommand(program);
  registerMalleableCommand(program);
  registerIterateCommand(program);
  registerNodeCommand(program);
  registerMonitorCommand(program);
  registerProvisionCommand(program);
  registerUpCommands(program);
  registerDeployCommands(program);
  registerClusterCommands(program);
  registerResultCommand(program);
  registerCoordCommands(program);
  registerManagerCommands(program);
  registerServeCommand(program);
  registerSecretCommands(program);
  registerWorkflowCommands(program);
  registerZkTunnelCommand(program);
  return program;
}

/** Every command of `program`, depth first (the program itself first). */
export function allCommands(program: Command): Command[] {
  return [program, ...program.commands.flatMap((c) => allCommands(c))];
}

/** Runs the CLI; exit codes: 0 success, 1 failure, 2 bad usage or bad input. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    // A command that ran but found something wrong (an unverified answer, a failed job) set process.exitCode.
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end through here too, with exit code 0.
      return err.exitCode === 0 ? 0 : 2;
    }
    return reportError(err);
  }
}
