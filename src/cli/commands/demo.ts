import type { Command } from 'commander';

/**
 * `tidepool demo`: the elastic TSP demonstration lands with the runtime and search layers;
 * until then it says so plainly instead of pretending.
 */
export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run the elastic branch-and-bound demonstration on an embedded cluster')
    .option('--json', 'print one JSON object')
    .addHelpText('after', '\nExample:\n  npx tidepool demo')
    .action((opts: { json?: boolean }) => {
      const message = 'the demo is not available yet: it arrives with the elastic runtime and the search framework. ' +
        'The coordination layer is ready: see `tidepool coord --help`.';
      if (opts.json) process.stdout.write(`${JSON.stringify({ available: false, message })}\n`);
      else process.stdout.write(`${message}\n`);
    });
}
