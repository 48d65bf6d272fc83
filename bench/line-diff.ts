/**
 * Counting source lines and the lines one version of a program changes from another (Table III of
 * the malleable-jobs paper counts, with sloccount, the lines changed to make an application
 * malleable): a longest common subsequence of the two files' source lines.
 */

/** A file's source lines, trimmed: not blank, not only a comment (a line of a block comment starts with `*`). */
export function sourceLines(text: string): string[] {
  return text.split('\n').map((l) => l.trim()).filter((t) => t !== '' && !t.startsWith('//') && !t.startsWith('*') && !t.startsWith('/*'));
}

/**
 * The lines of `after` outside a longest common subsequence with `before` (added or changed), and the
 * lines of `before` outside it (removed or changed), each in file order.
 */
export function lineDiff(before: readonly string[], after: readonly string[]): { added: string[]; removed: string[] } {
  const n = before.length;
  const m = after.length;
  // lcs[i][j]: the longest common subsequence of before[i..] and after[j..].
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i]![j] = before[i] === after[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const added: string[] = [];
  const removed: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (before[i] === after[j]) {
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) removed.push(before[i++]!);
    else added.push(after[j++]!);
  }
  return { added: [...added, ...after.slice(j)], removed: [...removed, ...before.slice(i)] };
}
