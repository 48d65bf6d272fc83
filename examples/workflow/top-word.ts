/** A function task of the word-count workflow: the most frequent word in `uniq -c` output (ties: first in order). */
export function topWord(inputs: Record<string, Uint8Array>): Record<string, string> {
  let best = { word: '', count: -1 };
  for (const line of new TextDecoder().decode(inputs['counts.txt']).split('\n')) {
    const [count, word] = line.trim().split(/\s+/);
    if (word !== undefined && Number(count) > best.count) best = { word, count: Number(count) };
  }
  return { 'top.txt': `${best.word}\n` };
}
