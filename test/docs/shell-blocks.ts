/**
 * The shell blocks of a walkthrough page, as a test runs them: every ```sh block starts with a line
 * saying where it runs (`# on machine a`, `# on machines a, b and c`, `# on the laptop …`), and a line
 * ending in `# on a` runs on that machine only. Pages written this way can be run by a test, so they
 * cannot drift from what the commands do.
 */

export const MACHINES = ['a', 'b', 'c', 'laptop'] as const;
export type Machine = (typeof MACHINES)[number];

export interface ShellBlock {
  /** 1-based line of the opening fence, for messages. */
  line: number;
  /** The block's text without its first (`# on …`) line. */
  body: string;
  machines: Machine[];
}

const HEADER = /^# on (?:the (laptop)\b|machines? ([a-c](?:(?:, | and )[a-c])*)\b)/;
const LINE_MACHINE = /\s+# on ([a-c])\s*$/;

/** The ```sh blocks of `markdown`, in order; a block without a `# on …` first line is an error naming its line. */
export function shellBlocks(markdown: string, file: string): ShellBlock[] {
  const lines = markdown.split('\n');
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]!);
    if (i === lines.length) throw new Error(`${file}:${start + 1}: the sh block is not closed`);
    const header = HEADER.exec(body[0] ?? '');
    if (!header) throw new Error(`${file}:${start + 2}: an sh block must start with "# on machine X", "# on machines X, Y and Z" or "# on the laptop"`);
    const machines: Machine[] = header[1] ? ['laptop'] : header[2]!.split(/, | and /) as Machine[];
    blocks.push({ line: start + 1, body: body.slice(1).join('\n'), machines });
  }
  return blocks;
}

/** The commands of `block` on `machine`: lines marked `# on X` for another machine are left out, the marks removed. */
export function commandsFor(block: ShellBlock, machine: Machine): string {
  return block.body
    .split('\n')
    .flatMap((line) => {
      const only = LINE_MACHINE.exec(line);
      if (!only) return [line];
      return only[1] === machine ? [line.slice(0, only.index)] : [];
    })
    .join('\n');
}
