/**
 * Every job kind that ships with tidepool, registered (runtime/kinds/kind-registry.ts): a process that
 * runs jobs of any kind — a node the CLI starts, a program using the package entry — imports this
 * module. Each kind's reference module registers it; the kind's own code loads on its first job.
 */
import '../runtime/pool/task-pool-ref.js';
import './iterative/iterative-kind-ref.js';
import './malleable/malleable-kind-ref.js';
import './workflow/workflow-kind-ref.js';
import './service/service-kind-ref.js';
