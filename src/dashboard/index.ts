/**
 * tidepool-runtime/dashboard: watch a cluster from a program — `ClusterMonitor` reads what the nodes
 * publish (no job state of its own) and `startDashboard` serves the live page, its server-sent events
 * and Prometheus `/metrics` (docs/operations.md, docs/dashboard.md). Serving needs the optional
 * packages fastify, prom-client, uplot, vega and vega-lite.
 */
export { ClusterMonitor, type MonitorOptions } from './cluster-monitor.js';
export { startDashboard, type DashboardOptions, type DashboardServer } from './dashboard-server.js';
export type { ClusterSnapshot, NodeView, JobView, JobState, TimelinePoint, FigureSample, JobFigureHistory, EventListView, DashboardHello } from './snapshot.js';
