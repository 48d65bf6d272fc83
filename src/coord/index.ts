/**
 * tidepool-runtime/coord: the coordination layer a program can use directly — a client of ZooKeeper or
 * of the embedded backend (one contract: znodes, watches, multi-op transactions, sessions) and the
 * recipes tidepool is built on (docs/coordination.md).
 */
export type * from './types.js';
export { connect } from './connect.js';
export { CoordError, isCoordError, isRetryable, type CoordErrorCode } from './errors.js';
export { OPEN_ACL, Perm, type Acl, type AclEntry } from './access.js';
export { Transaction } from './transaction.js';
export { watchChildren, watchData, type WatchHandle, type WatchOptions } from './watch.js';
export { GroupMembership, type Member, type MemberMeta } from './recipes/group-membership.js';
export { LeaderElection, type Candidate } from './recipes/leader-election.js';
export { TerminationList, TaskTracker, type CompletedTask, type TaskTrackerOptions } from './recipes/termination-detection.js';
export { GlobalVariables, type MergeRule, type VarDefinition } from './recipes/global-variables.js';
export { addStats, emptyStats, type RecipeStats } from './recipes/recipe-stats.js';
