/**
 * A block of status lines redrawn in place on a terminal (cursor up, clear, rewrite), so that a
 * long run shows live figures without scrolling. On anything but a TTY it draws nothing.
 */
export class LiveLines {
  private drawn = 0;

  constructor(private readonly out: NodeJS.WriteStream = process.stderr) {}

  get enabled(): boolean {
    return this.out.isTTY === true;
  }

  render(lines: string[]): void {
    if (!this.enabled) return;
    const width = Math.max(20, (this.out.columns ?? 100) - 1);
    const up = this.drawn > 0 ? `\x1b[${this.drawn}F` : '';
    this.out.write(`${up}\x1b[J${lines.map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l)).join('\n')}\n`);
    this.drawn = lines.length;
  }

  /** Leaves the last drawing on screen; the next output starts below it. */
  done(): void {
    this.drawn = 0;
  }
}
