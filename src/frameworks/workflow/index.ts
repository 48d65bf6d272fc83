/**
 * tidepool-runtime/workflow: many-task workflows (docs/workflow.md) — read Pegasus DAX/YAML and
 * WfCommons files (`loadWorkflow`; the DAX and WfCommons readers need the optional packages saxes
 * and ajv) or build one in code (`WorkflowBuilder`), then run it on a cluster (`runWorkflow`).
 */
export { loadWorkflow, parseWorkflow } from './load-workflow.js';
export { WorkflowBuilder, type TaskDecl, type FileUse, type WorkflowSource } from './workflow-builder.js';
export { WorkflowError } from './workflow-error.js';
export { finalOutputs, workflowInputs, childrenOf, type Workflow, type WorkflowTask, type WorkflowFile, type WorkflowCounts, type CommandSpec, type FunctionRef, type WorkflowFunction, type FunctionTaskContext, type AddedTask } from './workflow.js';
export { runWorkflow, submitWorkflow, prepareReplayInputs, type RunWorkflowOptions } from './run-workflow.js';
export type { WorkflowJobConfig, WorkflowResult, MemberReport } from './workflow-kind.js';
export type { EngineStats } from './workflow-engine.js';
