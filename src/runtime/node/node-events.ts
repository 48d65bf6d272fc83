/** What a node reports about itself and its job (for the API, the CLI and the dashboard). */
export type NodeEvent =
  | { type: 'job-joined'; node: string; job: string }
  | { type: 'job-left'; node: string; job: string; reason: 'drained' | 'finished' | 'failed' }
  | { type: 'leader'; node: string; job: string }
  | { type: 'steal'; job: string; from: string; to: string; taskId: string }
  | { type: 'migration'; job: string; from: string; to: string; taskId: string }
  /** A task was placed on a chosen node (TaskContext.spawn with `on`) and claimed there. */
  | { type: 'placement'; job: string; from: string; to: string; taskId: string }
  | { type: 'task-done'; job: string; node: string; taskId: string }
  | { type: 'failed'; job: string; node: string; error: string }
  /** Periodic load report of a node in a job (cumulative counters). */
  | { type: 'progress'; job: string; node: string; running: number; pooled: number; tasksDone: number; splits: number; stealsIn: number; stealsOut: number; migrationsOut: number };
