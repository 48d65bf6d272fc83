import type { Command } from 'commander';
import { ITERATIVE_APPLICATIONS } from '../../frameworks/iterative/apps/applications.js';
import { STRATEGIES, type BalanceStrategy } from '../../frameworks/iterative/iterative-types.js';
import { runIterativeApplication } from '../../frameworks/iterative/run-application.js';
import { UsageError } from '../errors.js';
import { defaultWorkers, nonNegativeInt, positiveInt } from '../options.js';

interface IterateFlags {
  iterations?: string;
  nodes?: string;
  workers?: string;
  balance: string;
  seed: string;
  progress?: boolean;
  json?: boolean;
}

/** `tidepool iterate APP`: a Monte Carlo run balanced across threads and nodes, checked against its closed form. */
export function registerIterateCommand(program: Command): void {
  program
    .command('iterate')
    .argument('<app>', `one of: ${Object.keys(ITERATIVE_APPLICATIONS).join(', ')}`)
    .description('run an iterative Monte Carlo application on an embedded cluster, balanced across threads and nodes')
    .option('--iterations <n>', 'iterations (histories, paths) to run (default: the application\'s)')
    .option('--nodes <n>', 'embedded nodes', '1')
    .option('--workers <n>', 'worker threads per node (default: usable cores / nodes, at least 1)')
    .option('--balance <strategy>', `how iterations are balanced: ${STRATEGIES.join(', ')}`, 'steal')
    .option('--seed <n>', 'seed of the iteration-indexed random streams', '1')
    .option('--progress', 'print progress lines on stderr even when it is not a terminal')
    .option('--json', 'print one JSON object')
    .addHelpText('after', '\nThe result is bit-identical for a given seed and iteration count, whatever the nodes, workers or strategy.\n\nExamples:\n  tidepool iterate slab --iterations 1000000 --nodes 2\n  tidepool iterate option --balance steal --json')
    .action(async (name: string, flags: IterateFlags) => {
      const app = ITERATIVE_APPLICATIONS[name];
      if (!app) throw new UsageError(`unknown application "${name}": choose one of ${Object.keys(ITERATIVE_APPLICATIONS).join(', ')}`);
      if (!STRATEGIES.includes(flags.balance as BalanceStrategy)) throw new UsageError(`--balance: "${flags.balance}" is not one of ${STRATEGIES.join(', ')}`);
      const nodes = positiveInt(flags.nodes ?? '1', '--nodes');
      const workers = flags.workers === undefined ? Math.max(1, Math.floor(defaultWorkers() / nodes)) : positiveInt(flags.workers, '--workers');
      const iterations = flags.iterations === undefined ? app.iterations : positiveInt(flags.iterations, '--iterations');
      const seed = nonNegativeInt(flags.seed, '--seed');
      const tty = process.stderr.isTTY && !flags.json;
      const showProgress = tty || (flags.progress === true && !flags.json);
      if (!flags.json) process.stdout.write(`${app.name}: ${app.describe(app.params)}; ${iterations} ${app.unit} on ${nodes} node(s) × ${workers} worker(s), balance ${flags.balance}\n`);
      const run = await runIterativeApplication(app, {
        iterations, nodes, workers, seed, balance: flags.balance as BalanceStrategy,
        ...(showProgress ? { onProgress: (line: string) => process.stderr.write(tty ? `\r${line}   ` : `${line}\n`) } : {}),
      });
      if (tty) process.stderr.write('\n');
      const a = run.answer;
      const sigmas = a.stderr > 0 ? (a.estimate - a.exact) / a.stderr : 0;
      const verified = run.iterations === iterations && Math.abs(sigmas) < 5;
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ app: app.name, balance: flags.balance, nodes, workers, seed, iterations: run.iterations, ...a, sigmas, verified, seconds: run.seconds, tally: run.tally })}\n`);
      } else {
        process.stdout.write(`${a.quantity} ${fmt(a.estimate)} ± ${fmt(a.stderr)}; ${a.closedForm} = ${fmt(a.exact)} (${sigmas >= 0 ? '+' : ''}${sigmas.toFixed(2)} σ)${verified ? '' : '  NOT within 5 σ'}\n`);
        process.stdout.write(`${run.iterations} ${app.unit} in ${run.seconds.toFixed(2)} s (${Math.round(run.iterations / run.seconds)} ${app.unit}/s)\n`);
      }
      if (!verified) process.exitCode = 1;
    });
}

const fmt = (x: number) => x.toPrecision(6);
