/**
 * What the cluster monitor sees, once per tick: the data behind the dashboard page (pushed as
 * server-sent events), the Prometheus metrics and `tidepool status`. Plain JSON, no classes.
 */
import type { TimedEvent } from '../runtime/kinds/kind-events.js';
import type { NodeCounters } from '../runtime/node/node-stats.js';

/** One live node of the cluster. Counters are cumulative within the node's current job. */
export interface NodeView extends NodeCounters {
  id: string;
  address: string;
  workers: number;
  /** The job the node takes part in, or null when idle. */
  job: string | null;
  /** The kind of that job (e.g. task-pool), and the figures that kind publishes (shown in the kinds panel). */
  kind: string | null;
  figures: Record<string, number>;
  /** Tasks completed per second (over the monitor's rate window). */
  tasksPerSec: number;
  /** When the monitor first saw the node (ms since the epoch). */
  firstSeen: number;
}

export type JobState = 'running' | 'done' | 'failed' | 'cancelled';

export interface JobView {
  id: string;
  /** The task type's module (a file URL or path). */
  task: string;
  state: JobState;
  /** Nodes taking part now. */
  nodes: number;
  /** Nodes the job asked for when submitted. */
  requested: number;
  createdAt: number;
  finishedAt: number | null;
  /** Tasks completed so far, as counted by the monitor (all nodes, including ones that left). */
  tasksDone: number;
  /** The job's numeric global variables (e.g. `bound`: a search job's incumbent). */
  vars: Record<string, number>;
  error: string | null;
}

/** One point of the timeline (one per tick). */
export interface TimelinePoint {
  /** ms since the epoch */
  t: number;
  /** Live nodes in the cluster, and how many of them take part in a job. */
  nodes: number;
  activeNodes: number;
  busyWorkers: number;
  tasksPerSec: number;
  stealsPerSec: number;
  migrationsPerSec: number;
  /** Incumbent (`bound` variable) per running search job. */
  incumbent: Record<string, number>;
  /** Nodes taking part in each job (seed 003 Fig. 6: nodes to jobs over time). */
  jobNodes: Record<string, number>;
}

/** One tick's figures of one job: each node's, as it last published them. */
export interface FigureSample {
  t: number;
  nodes: Record<string, Record<string, number>>;
}

/** A job's figures over time (a bounded ring: the newest samples). */
export interface JobFigureHistory {
  job: string;
  kind: string;
  samples: FigureSample[];
}

/** Events of one list: a kind's (merged over its nodes and jobs, each event naming its job) or an event source's. */
export interface EventListView {
  /** The kind's name, or the event source's (e.g. `service`, `manager`). */
  origin: string;
  list: string;
  events: TimedEvent[];
}

export interface ClusterSnapshot {
  at: number;
  nodes: NodeView[];
  jobs: JobView[];
  point: TimelinePoint;
  /** Events that are new (or changed) since the previous snapshot, by list. */
  events: EventListView[];
}

/** What a page receives first: the current snapshot and the timeline so far. */
export interface DashboardHello {
  snapshot: ClusterSnapshot;
  history: TimelinePoint[];
  /** Every job's figures over time, and every event list held. */
  figures: JobFigureHistory[];
  events: EventListView[];
  /** The monitor's tick, ms. */
  intervalMs: number;
}
