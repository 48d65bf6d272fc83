import type { Command } from 'commander';

/**
 * `tidepool demo`: the elastic TSP demonstration with its live view lands with the dashboard;
 * until then it says so plainly instead of pretending, and points at what already works.
 */
export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run the elastic branch-and-bound demonstration on an embedded cluster')
    .option('--json', 'print one JSON object')
    .addHelpText('after', '\nExample:\n  npx tidepool demo')
    .action((opts: { json?: boolean }) => {
      const message = 'the demo is not available yet: it arrives with the live dashboard. ' +
        'Meanwhile the same elastic run works from the command line: tidepool solve tsp random:12:1 --no-prune --scale 1s:+2,3s:-2';
      if (opts.json) process.stdout.write(`${JSON.stringify({ available: false, message })}\n`);
      else process.stdout.write(`${message}\n`);
    });
}
