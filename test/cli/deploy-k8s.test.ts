/**
 * `tidepool deploy k8s`: the manifests it writes are valid Kubernetes objects, checked offline
 * against the API's schemas (kubernetes-models; nothing is applied to a cluster here), and they say
 * what a tidepool cluster needs: the pod's IP as the advertised address, a drain on pre-stop,
 * readiness on /readyz, the secret from a Secret, ZooKeeper servers whose myid follows their ordinal.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet, type IStatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { Service } from 'kubernetes-models/v1/Service';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import { assertCleanError, tidepool } from '../support/cli.js';

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };

/** Validates an object against its kind's schema; throws the schema's complaint. */
function validate(obj: Obj): void {
  switch (`${obj.apiVersion}/${obj.kind}`) {
    case 'apps/v1/StatefulSet': return new StatefulSet(obj as never).validate();
    case 'apps/v1/Deployment': return new Deployment(obj as never).validate();
    case 'v1/Service': return new Service(obj as never).validate();
    default: throw new Error(`unexpected kind ${obj.apiVersion} ${obj.kind}`);
  }
}

async function manifests(args: string[]): Promise<Obj[]> {
  const run = await tidepool(['deploy', 'k8s', ...args]);
  assert.equal(run.code, 0, run.stderr);
  if (args.includes('--json')) return (JSON.parse(run.stdout) as { items: Obj[] }).items;
  assert.match(run.stdout, /^# tidepool cluster for Kubernetes.*Checked against the Kubernetes API schemas, not run here\./);
  return parseAllDocuments(run.stdout).map((d) => d.toJS() as Obj).filter(Boolean);
}

const named = (objs: Obj[], kind: string, name: string) => {
  const found = objs.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `${kind} ${name} among ${objs.map((o) => `${o.kind} ${o.metadata.name}`).join(', ')}`);
  return found;
};

describe('tidepool deploy k8s', () => {
  it('writes a ZooKeeper StatefulSet, the nodes\' StatefulSet and the monitor, each valid against the Kubernetes schemas', async () => {
    const objs = await manifests(['--nodes', '4', '--workers', '2', '--image', 'registry.example/tidepool:0.1.0', '--namespace', 'tp', '--drain', '90s']);
    assert.deepEqual(objs.map((o) => `${o.kind}/${o.metadata.name}`), [
      'Service/tidepool-zk-hs', 'StatefulSet/tidepool-zk', 'Service/tidepool-nodes', 'StatefulSet/tidepool-node', 'Deployment/tidepool-monitor', 'Service/tidepool-monitor',
    ]);
    for (const o of objs) {
      assert.doesNotThrow(() => validate(o), `${o.kind} ${o.metadata.name}`);
      assert.equal(o.metadata.namespace, 'tp');
    }

    const zk = named(objs, 'StatefulSet', 'tidepool-zk') as unknown as IStatefulSet;
    assert.equal(zk.spec!.replicas, 3);
    const zkEnv = Object.fromEntries(zk.spec!.template.spec!.containers[0]!.env!.map((e) => [e.name, e.value]));
    assert.equal(zkEnv.ZOO_SERVERS, [0, 1, 2].map((i) => `server.${i + 1}=tidepool-zk-${i}.tidepool-zk-hs.tp.svc:2888:3888;2181`).join(' '));
    assert.match(zk.spec!.template.spec!.containers[0]!.command!.join(' '), /ZOO_MY_ID=\$\(\(\$\{HOSTNAME##\*-\} \+ 1\)\)/);

    const nodes = named(objs, 'StatefulSet', 'tidepool-node') as unknown as IStatefulSet;
    assert.equal(nodes.spec!.replicas, 4);
    const pod = nodes.spec!.template.spec!;
    const node = pod.containers[0]!;
    const args = node.args!;
    const flag = (name: string) => args[args.indexOf(name) + 1];
    assert.equal(flag('--zk'), 'tidepool-zk-0.tidepool-zk-hs.tp.svc:2181,tidepool-zk-1.tidepool-zk-hs.tp.svc:2181,tidepool-zk-2.tidepool-zk-hs.tp.svc:2181');
    assert.equal(flag('--listen'), '0.0.0.0:7400');
    assert.equal(flag('--advertise'), '$(POD_IP)');
    assert.equal(flag('--id'), '$(POD_NAME)');
    assert.deepEqual(node.env!.find((e) => e.name === 'POD_IP')!.valueFrom!.fieldRef!.fieldPath, 'status.podIP');
    assert.deepEqual(node.readinessProbe!.httpGet, { path: '/readyz', port: 9464 });
    assert.deepEqual(node.livenessProbe!.httpGet, { path: '/healthz', port: 9464 });
    assert.equal(flag('--metrics-port'), '9464');
    assert.match(node.lifecycle!.preStop!.exec!.command!.join(' '), /kill -TERM 1; .*while kill -0 1 .* -lt 90 \]/);
    assert.ok(pod.terminationGracePeriodSeconds! > 90, 'the grace period covers the drain');
    assert.deepEqual(node.resources!.requests, { cpu: '2' });
    assert.equal(pod.volumes![0]!.secret!.secretName, 'tidepool-secret');
    assert.equal(flag('--secret-file'), `${node.volumeMounts![0]!.mountPath}/secret`);

    const monitor = named(objs, 'Deployment', 'tidepool-monitor') as unknown as IDeployment;
    assert.deepEqual(monitor.spec!.template.spec!.containers[0]!.args, ['monitor', '--zk', flag('--zk'), '--listen', '0.0.0.0:7470']);
  });

  it('uses an existing ensemble with --zk (no ZooKeeper objects), and writes JSON with --json', async () => {
    const objs = await manifests(['--nodes', '2', '--zk', 'zk-a:2181,zk-b:2181', '--json']);
    assert.deepEqual(objs.map((o) => o.kind), ['Service', 'StatefulSet', 'Deployment', 'Service']);
    for (const o of objs) validate(o);
    const args = (named(objs, 'StatefulSet', 'tidepool-node') as unknown as IStatefulSet).spec!.template.spec!.containers[0]!.args!;
    assert.equal(args[args.indexOf('--zk') + 1], 'zk-a:2181,zk-b:2181');
  });

  it('the schemas catch a broken object (the check is not a formality)', async () => {
    const objs = await manifests(['--json']);
    const nodes = structuredClone(named(objs, 'StatefulSet', 'tidepool-node')) as unknown as { spec: { template: { spec: { containers: Array<Record<string, unknown>> } } } };
    nodes.spec.template.spec.containers[0]!.ports = [{ containerPort: '7400' }];
    assert.throws(() => validate(nodes as unknown as Obj), /containerPort must be integer/);
    delete nodes.spec.template.spec.containers[0]!.name;
    assert.throws(() => validate(nodes as unknown as Obj), /must have required property name/);
  });

  it('a node pod\'s arguments are flags tidepool node takes', async () => {
    const objs = await manifests(['--json']);
    const args = (named(objs, 'StatefulSet', 'tidepool-node') as unknown as IStatefulSet).spec!.template.spec!.containers[0]!.args!
      .map((a) => a.replace('$(POD_NAME)', 'tidepool-node-0').replace('$(POD_IP)', '10.1.2.3'));
    // Parsed and checked up to reading the secret, which only the pod has.
    assertCleanError(await tidepool(args), /--secret-file: cannot read \/etc\/tidepool\/secret/);
  });

  it('refuses bad names with a clear error', async () => {
    assertCleanError(await tidepool(['deploy', 'k8s', '--namespace', 'Bad_NS']), /--namespace: "Bad_NS" is not a Kubernetes name/);
    assertCleanError(await tidepool(['deploy', 'k8s', '--zk', 'zk-a']), /--zk: .*"zk-a"/);
  });
});
