/**
 * `--dashboard [port]` of the commands that run work: the live dashboard of the cluster the command
 * runs on (embedded or at --zk), served while the work runs. Without a port it takes 7470, or any
 * free port when that one is taken; with a port, exactly that one.
 */
import type { CoordClient } from '../coord/types.js';
import { ClusterMonitor } from '../dashboard/cluster-monitor.js';
import { startDashboard, type DashboardServer } from '../dashboard/dashboard-server.js';

export const DASHBOARD_PORT = 7470;

/** How often the dashboard's figures are read (and embedded nodes publish theirs while one is served). */
export const DASHBOARD_TICK_MS = 500;

export interface DashboardPlace {
  host: string;
  port: number;
  /** A taken port falls back to any free one (the default port only). */
  anyPortIfBusy: boolean;
}

/** Where `--dashboard` asks to serve: undefined or false → nowhere; true → the default port; N → port N. */
export function dashboardPlace(value: boolean | number | undefined, host = '127.0.0.1'): DashboardPlace | null {
  if (value === undefined || value === false) return null;
  return value === true ? { host, port: DASHBOARD_PORT, anyPortIfBusy: true } : { host, port: value, anyPortIfBusy: false };
}

/** Serves the dashboard of `monitor`'s cluster at `place`. */
export async function listenDashboard(monitor: ClusterMonitor, place: DashboardPlace): Promise<DashboardServer> {
  try {
    return await startDashboard(monitor, { host: place.host, port: place.port });
  } catch (err) {
    if (!place.anyPortIfBusy || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    return startDashboard(monitor, { host: place.host, port: 0 });
  }
}

export interface RunningDashboard {
  url: string;
  close(): Promise<void>;
}

/** Watches the cluster behind `client` and serves its dashboard at `place` until `close()`. */
export async function serveDashboard(client: CoordClient, place: DashboardPlace, tickMs = DASHBOARD_TICK_MS): Promise<RunningDashboard> {
  const monitor = new ClusterMonitor(client, { intervalMs: tickMs });
  await monitor.start();
  let server: DashboardServer;
  try {
    server = await listenDashboard(monitor, place);
  } catch (err) {
    await monitor.stop();
    throw err;
  }
  return {
    url: server.url,
    close: async () => {
      await server.close();
      await monitor.stop();
    },
  };
}

/**
 * Runs `work` with the dashboard of `client`'s cluster served at `place` (when given), announced on
 * stderr; the dashboard stops when the work ends.
 */
export async function withDashboard<T>(client: CoordClient, place: DashboardPlace | null, work: (url: string | null) => Promise<T>): Promise<T> {
  if (!place) return work(null);
  const dashboard = await serveDashboard(client, place);
  process.stderr.write(`dashboard: ${dashboard.url}  (live while the work runs)\n`);
  try {
    return await work(dashboard.url);
  } finally {
    await dashboard.close();
  }
}
