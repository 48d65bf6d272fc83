/**
 * prom-client, an optional package of tidepool-runtime: loaded when a metrics registry is made (a node
 * or service asked for metrics). Declarations that programs see name none of its types (see
 * PrometheusRegistry), so that a program that uses no metrics needs neither the package nor its types.
 */
import type * as PromClient from 'prom-client';
import { requireOptional } from '../../util/optional-package.js';

export const promClient = () => requireOptional<typeof PromClient>('prom-client', 'metrics (NodeOptions.metrics, --metrics-port, MetricsRegistry)');
