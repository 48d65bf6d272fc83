import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseLevel, setLogLevel, LOG_LEVELS } from '../util/log.js';
import { registerClusterCommands } from './commands/cluster.js';
import { registerCoordCommands } from './commands/coord.js';
import { registerDemo } from './commands/demo.js';
import { registerNodeCommand } from './commands/node.js';
import { registerSolveCommand } from './commands/solve.js';
import { UsageError, reportError } from './errors.js';

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

export function buildProgram(): Command {
  const program = new Command('tidepool')
    .description('Elastic task-parallel runtime: run one program on a laptop\'s cores or on a cluster that grows and shrinks mid-run.')
    .version(version())
    .option('--log-level <level>', `log level: ${LOG_LEVELS.join(', ')}`, 'warn')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .hook('preAction', (cmd) => {
      const level = cmd.opts<{ logLevel: string }>().logLevel;
      const parsed = parseLevel(level);
      if (!parsed) throw new UsageError(`--log-level: "${level}" is not one of ${LOG_LEVELS.join(', ')}`);
      setLogLevel(parsed);
    });
  registerDemo(program);
  registerSolveCommand(program);
  registerNodeCommand(program);
  registerClusterCommands(program);
  registerCoordCommands(program);
  return program;
}

/** Runs the CLI; exit codes: 0 success, 1 failure, 2 bad usage or bad input. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end through here too, with exit code 0.
      return err.exitCode === 0 ? 0 : 2;
    }
    return reportError(err);
  }
}
