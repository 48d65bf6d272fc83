/**
 * `--progress` of long commands: a progress line on stderr. On a terminal it is redrawn in place; on
 * anything else (a log file, CI) it is written as plain lines, one per interval, so that a run that
 * is not watched live still says how far it got. Default: on for a terminal unless --json.
 */

/** How often plain progress lines are written when not on a terminal, unless `--progress DURATION` says. */
export const PROGRESS_LINE_MS = 1000;

export class Progress {
  private lastLineAt = -Infinity;
  private drawn = false;

  private constructor(private readonly mode: 'off' | 'redraw' | 'lines', private readonly intervalMs: number, private readonly out: NodeJS.WriteStream) {}

  /**
   * From the `--progress` setting: undefined → on a terminal unless `json`; false → off; true → on;
   * a number → on, plain lines at most that often (ms).
   */
  static from(setting: boolean | number | undefined, json: boolean, out: NodeJS.WriteStream = process.stderr): Progress {
    const on = setting === undefined ? out.isTTY === true && !json : setting !== false;
    const intervalMs = typeof setting === 'number' ? setting : PROGRESS_LINE_MS;
    return new Progress(!on ? 'off' : out.isTTY === true ? 'redraw' : 'lines', intervalMs, out);
  }

  get enabled(): boolean {
    return this.mode !== 'off';
  }

  /** The latest progress; written now on a terminal, or when the interval has passed since the last line. */
  update(line: string): void {
    if (this.mode === 'redraw') {
      this.out.write(`\r${line}\x1b[K`);
      this.drawn = true;
    } else if (this.mode === 'lines') {
      const now = performance.now();
      if (now - this.lastLineAt < this.intervalMs) return;
      this.lastLineAt = now;
      this.out.write(`${line}\n`);
    }
  }

  /** Ends the progress display, with a last line if given (always written). */
  end(line?: string): void {
    if (this.mode === 'off') return;
    if (line !== undefined) {
      this.out.write(this.mode === 'redraw' ? `\r${line}\x1b[K\n` : `${line}\n`);
    } else if (this.drawn) {
      this.out.write('\n');
    }
    this.drawn = false;
  }
}
