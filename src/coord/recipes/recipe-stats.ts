/** Operation counts a recipe reports: reads, writes, transactions, and retried attempts. */
export interface RecipeStats {
  reads: number;
  writes: number;
  transactions: number;
  retries: number;
}

export function emptyStats(): RecipeStats {
  return { reads: 0, writes: 0, transactions: 0, retries: 0 };
}

/** Sums several recipes' stats, e.g. for a node's metrics. */
export function addStats(...all: RecipeStats[]): RecipeStats {
  const sum = emptyStats();
  for (const s of all) {
    sum.reads += s.reads;
    sum.writes += s.writes;
    sum.transactions += s.transactions;
    sum.retries += s.retries;
  }
  return sum;
}
