/** Prints rows as an aligned text table (first row is the header). */
export function printTable(rows: Array<Array<string | number>>): void {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? formatNumber(c) : c)));
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  for (const [k, r] of cells.entries()) {
    console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
    if (k === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
}

function formatNumber(n: number): string {
  if (Number.isInteger(n)) return String(n);
  return Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toFixed(3);
}
