#!/usr/bin/env node
// Entry point of the CLI process (bin/tidepool.mjs loads the built copy of this module's main).
import { main } from './main.js';

process.exitCode = await main(process.argv);
