/**
 * The root entry point (`tidepool-runtime`) is the public API a program needs, documented: every export
 * has a doc comment (what editors show on hover), and none of the internals that used to leak from it
 * (coordination tree helpers, path helpers, schedulers, simulators, engine classes, data-plane machinery)
 * is exported. The other parts have entry points of their own (package.json "exports").
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../src/index.ts', import.meta.url));

/** Names that are internals: the tree and path helpers, the scheduler, simulators, engines, the data plane's classes. */
const INTERNALS = [
  'mkdirp', 'deleteRecursive', 'waitForState', 'joinPath', 'parentOf', 'basename', 'validatePath',
  'Reconciler', 'planScheduling', 'applyDecisions', 'fcfsPolicy', 'setDesiredSize', 'assignNamedNode',
  'simulateWorkload', 'spotFleetRun', 'priceSensitiveRun', 'simulateFaultTolerance', 'ManagerCore', 'SplitPhaseExecutor',
  'WorkflowEngine', 'Journal', 'ObjectStore', 'BlobTransferService', 'BlobDirectory', 'DataPlane', 'ControlChannel',
  'EmbeddedServer', 'ZooKeeperClient', 'TidepoolNode', 'runElastic', 'submitJob', 'requestBytes', 'MAX_REQUEST_BYTES',
];

function rootExports(): Array<{ name: string; doc: string }> {
  const program = ts.createProgram([ROOT], {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
    strict: true, skipLibCheck: true, noEmit: true, types: ['node'],
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(ROOT)!)!;
  return checker.getExportsOfModule(module).map((symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    return { name: symbol.name, doc: ts.displayPartsToString(target.getDocumentationComment(checker)).trim() };
  });
}

test('every export of the root entry point is documented, and no internal is exported', () => {
  const exports = rootExports();
  assert.ok(exports.some((e) => e.name === 'Cluster') && exports.some((e) => e.name === 'defineTask'), 'the root exports the task and cluster API');
  assert.deepEqual(exports.filter((e) => e.doc === '').map((e) => e.name), [], 'exports without a doc comment');
  assert.deepEqual(exports.map((e) => e.name).filter((n) => INTERNALS.includes(n)), [], 'internals exported from the root');
});
