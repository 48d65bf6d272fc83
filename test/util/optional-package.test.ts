/**
 * The optional packages' install hints: the version line named per Node major (isolated-vm builds for
 * some majors only; scripts/node-versions.sh installs what this names on each major CI tests), the
 * peer range otherwise, and the MissingPackageError of a part used without its package.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { installCommand, MissingPackageError, packageSpec, requireOptional, resolveOptional } from '../../src/util/optional-package.js';

const PKG = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  engines: { node: string }; peerDependencies: Record<string, string>;
};

/** The majors of a range written as `^A.b.c || ^D.e.f …` (the form package.json uses). */
function caretMajors(range: string): number[] {
  return range.split('||').map((part) => {
    const m = /^\s*\^(\d+)\.\d+\.\d+\s*$/.exec(part);
    assert.ok(m, `"${part.trim()}" of "${range}" is a caret range`);
    return Number(m[1]);
  });
}

describe('optional packages', () => {
  it('names the isolated-vm line that builds on each Node major, and the bare name where none is known', () => {
    assert.equal(packageSpec('isolated-vm', '20.20.2'), 'isolated-vm@5');
    assert.equal(packageSpec('isolated-vm', '22.12.0'), 'isolated-vm@6');
    assert.equal(packageSpec('isolated-vm', '24.21.0'), 'isolated-vm@6');
    assert.equal(packageSpec('isolated-vm', '26.1.0'), 'isolated-vm');
  });

  it('every Node major of engines gets an isolated-vm line that the peer range accepts', () => {
    const nodeMajors = caretMajors(PKG.engines.node);
    assert.deepEqual(nodeMajors, [20, 22, 24]);
    const accepted = caretMajors(PKG.peerDependencies['isolated-vm']!);
    for (const major of nodeMajors) {
      const line = Number(packageSpec('isolated-vm', `${major}.0.0`).split('@')[1]);
      assert.ok(accepted.includes(line), `Node ${major}: isolated-vm@${line} is within ${PKG.peerDependencies['isolated-vm']}`);
    }
  });

  it('names the peer range of other packages, and the command that installs several', () => {
    assert.equal(packageSpec('saxes'), 'saxes@^6.0.0');
    assert.equal(installCommand('saxes', 'fastify'), 'npm install saxes@^6.0.0 fastify@^5.12.8');
  });

  it('a missing package is a MissingPackageError naming it, the part and the install command; an installed one loads', () => {
    const missing = 'tidepool-no-such-package';
    for (const load of [() => requireOptional(missing, 'the test part'), () => resolveOptional(missing, 'the test part')]) {
      assert.throws(load, (err: unknown) => {
        assert.ok(err instanceof MissingPackageError);
        assert.equal(err.packageName, missing);
        assert.equal(err.part, 'the test part');
        assert.equal(err.message, `tidepool-runtime: the test part needs the package ${missing}, which is not installed: npm install ${missing}`);
        return true;
      });
    }
    assert.equal(typeof requireOptional<{ SaxesParser: unknown }>('saxes', 'the test part').SaxesParser, 'function');
  });
});
