#!/usr/bin/env node
// The tidepool command: runs the compiled CLI (built by `npm ci` through the prepare script).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('error: tidepool is not built yet: run `npm run build` (npm ci does it for you)\n');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv);
