/**
 * Runs a malleable application in this process, every object on one host, iteration after iteration:
 * the reference a distributed run must match bit for bit, and a way to run an application without a
 * cluster. The application code is the same; nothing in it knows whether it runs here or spread out.
 * Collectives are combined as on a cluster (in object index order); a resize request has no one to
 * go to here and is ignored.
 */
import type { AnyMalleableApp } from './malleable-app.js';
import { emptyOutbox, ObjectHost } from './object-host.js';

export function runSequential<R = unknown>(app: AnyMalleableApp, params: unknown, onIteration?: (iteration: number) => void): R {
  const wrong = app.validate?.(params);
  if (wrong) throw new Error(`${app.name}: ${wrong}`);
  const n = app.objects(params);
  const host = new ObjectHost(app, params);
  host.deliver(0, host.init(Array.from({ length: n }, (_, i) => i)));
  for (let it = 0; it < app.iterations(params); it++) {
    const out = emptyOutbox();
    for (let i = 0; i < n; i++) host.step(i, it, out);
    host.endIteration(it);
    host.deliver(it + 1, out.messages);
    host.deliverCollective(it + 1, out.collective);
    onIteration?.(it);
    if (app.done?.(host.collectiveView(it + 1).reduced, it, params) === true) break;
  }
  return app.result(host.summaries().map(([, s]) => s), params) as R;
}
