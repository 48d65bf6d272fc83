/**
 * Maps a sandbox stack back to the client's source: a frame in the factories script
 * (`tidepool-task.js:LINE:COL`) is a position inside one captured function, which the client
 * knows the location of (and, for transpiled modules, the source map of).
 */
import type { Capture } from './capture.js';
import { clientPosition } from './inspector-scopes.js';
import { TASK_SCRIPT, factoriesScript } from './sandbox-runtime.js';

export function mapStack(stack: string, capture: Capture): string {
  const { firstLines } = factoriesScript(capture.graph.codes);
  const pattern = new RegExp(`${TASK_SCRIPT.replace('.', '\\.')}:(\\d+):(\\d+)`, 'g');
  return stack
    .split('\n')
    .filter((line) => !/tidepool-(sandbox-runtime|run)\.js|node:vm|isolate-host|vm-sandbox/.test(line))
    .map((line) => line.replace(pattern, (whole, l: string, c: string) => {
      const lineNo = Number(l);
      let code = -1;
      for (let i = 0; i < firstLines.length; i++) if (firstLines[i]! <= lineNo) code = i;
      const location = code >= 0 ? capture.locations[code] : undefined;
      return location ? clientPosition(location, lineNo - firstLines[code]!, Number(c) - 1, true) : whole;
    }))
    .join('\n');
}
