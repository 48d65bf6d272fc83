/**
 * The npm packages only the dashboard needs (optional peer dependencies of tidepool-runtime), loaded
 * where they are used: an application that never serves a dashboard does not install them.
 */
import type fastifyFactory from 'fastify';
import type * as PromClient from 'prom-client';
import { MissingPackageError, requireOptional, resolveOptional } from '../util/optional-package.js';

export const DASHBOARD_PART = 'the dashboard (startDashboard, tidepool monitor, a command\'s --dashboard)';

/** fastify serves the page, its API and /metrics. */
export const fastify = () => requireOptional<typeof fastifyFactory>('fastify', DASHBOARD_PART);
/** prom-client writes the Prometheus exposition format. */
export const promClient = () => requireOptional<typeof PromClient>('prom-client', DASHBOARD_PART);

/** A file of a charting package the page loads (uplot, vega, vega-lite), found without loading it. */
export function chartPackageFile(name: string, file: string): string {
  return resolveOptional(name, DASHBOARD_PART, file);
}

/** Every package the dashboard needs. */
const PACKAGES = ['fastify', 'prom-client', 'uplot', 'vega', 'vega-lite'];

/** The dashboard's packages that are not installed (none: it can be served). */
export function missingDashboardPackages(): string[] {
  return PACKAGES.filter((name) => {
    try {
      resolveOptional(name, DASHBOARD_PART);
      return false;
    } catch (err) {
      if (err instanceof MissingPackageError) return true;
      throw err;
    }
  });
}
