/**
 * Seed 002 Fig. 1 and Fig. 3 in TypeScript: closures over an ordinary function are the tasks.
 *
 *   npx tsx examples/service/factorization.ts                      # on this machine's cores
 *   npx tsx examples/service/factorization.ts --url https://127.0.0.1:7480 --token-file token --ca cert.pem
 *
 * Prints one JSON object: each number's smallest factor, and the outputs of the parallel loop.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Distribution, ServiceConnectionError } from '../../src/frameworks/service/index.js';
import { factorize } from './programs.js';

const { values } = parseArgs({ options: { url: { type: 'string' }, 'token-file': { type: 'string' }, ca: { type: 'string' } } });
let distribution: Distribution;
try {
  distribution = values.url
    ? await Distribution.connect(values.url, { token: readFileSync(values['token-file'] ?? 'token', 'utf8').trim(), ca: values.ca ? readFileSync(values.ca) : undefined })
    : Distribution.local();
} catch (e) {
  if (!(e instanceof ServiceConnectionError)) throw e;
  process.stderr.write(`${e.message}\n`); // the URL, the certificate's names and the fix, in one line
  process.exit(1);
}

const numbers = [1_000_003 * 999_983, 104_723 * 104_729, 2 ** 31 - 1, 600_851_475_143];
const tasks = numbers.map((n) => distribution.task(() => factorize(n)));
await distribution.start(tasks); // one round trip for the whole batch
const factors: number[] = [];
for (const t of tasks) factors.push(await t.result);

const inputs = [91, 8_633, 1_022_117];
const outputs = new Array<number>(inputs.length).fill(0);
await distribution.parallelFor(0, inputs.length, (i) => {
  outputs[i] = factorize(inputs[i]!);
});
// outputs now holds the results: the loop's side effects were applied to this process's memory

console.log(JSON.stringify({ factors, outputs, costs: distribution.lastCosts && { serializationMs: Math.round(distribution.lastCosts.serializationMs * 100) / 100 } }));
await distribution.close();
