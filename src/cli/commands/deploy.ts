import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { jsonOption } from '../common-options.js';
import { k8sManifests, type K8sOptions } from '../deploy/k8s-manifests.js';
import { UsageError } from '../errors.js';
import { ZK_HELP, duration, kinds } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';

/** The flags as parsed: the manifests' options, with --drain in milliseconds and the output's. */
type K8sFlags = Omit<K8sOptions, 'drainSeconds'> & {
  /** Milliseconds. */
  drain: number;
  out?: string;
  json?: boolean;
};

const NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** `tidepool deploy k8s`: Kubernetes manifests for a cluster (validated against the API's schemas; not applied here). */
export function registerDeployCommands(program: SettingsCommand): void {
  const deploy = program.command('deploy').description('generate deployment files for a cluster');
  jsonOption(deploy
    .command('k8s')
    .description('Kubernetes manifests: a ZooKeeper StatefulSet (or --zk), the nodes\' StatefulSet and the monitor')
    .setting('--nodes <n>', 'node pods', kinds.positiveInt, '3')
    .setting('--workers <n>', 'worker threads per node (and CPUs each pod requests)', kinds.positiveInt, '1')
    .setting('--image <image>', 'container image with tidepool installed (the `tidepool` command on PATH)', kinds.text, 'tidepool:latest')
    .option('--zk <ensemble>', `an existing ZooKeeper ensemble, ${ZK_HELP}; without it a ZooKeeper StatefulSet is generated`)
    .setting('--zk-servers <n>', 'servers of the generated ZooKeeper StatefulSet (1, or 3 to survive one failure)', kinds.positiveInt, '3')
    .setting('--zk-image <image>', 'image of the generated ZooKeeper servers', kinds.text, 'zookeeper:3.8')
    .setting('--namespace <ns>', 'namespace of every object (default: the one kubectl applies to)', kinds.text)
    .setting('--secret-name <name>', 'the Secret holding the cluster secret under the key "secret"', kinds.text, 'tidepool-secret')
    .setting('--drain <duration>', 'how long a node pod being deleted may take to drain', duration(undefined, true), '60s')
    .setting('--out <file>', 'write the manifests to this file (default: standard output)', kinds.path), 'a JSON List (one line) instead of YAML documents')
    .addHelpText('after', [
      '',
      'The manifests are checked against the Kubernetes API schemas by tidepool\'s tests; they were not run on a',
      'cluster there. The cluster secret is a Secret you create first (never written into the manifests).',
      '',
      'Examples:',
      '  head -c 32 /dev/urandom | base64 > secret',
      '  tidepool deploy k8s --nodes 4 --workers 2 --image registry.example/tidepool:0.1.0 --out tidepool.yaml',
      '  tidepool deploy k8s --nodes 2 --zk zk-0.zk:2181,zk-1.zk:2181,zk-2.zk:2181 --json',
      '  # then: kubectl create secret generic tidepool-secret --from-file=secret=./secret && kubectl apply -f tidepool.yaml',
    ].join('\n'))
    .action((flags: K8sFlags) => {
      if (flags.namespace !== undefined && !NAME.test(flags.namespace)) throw new UsageError(`--namespace: "${flags.namespace}" is not a Kubernetes name (lower-case letters, digits, '-')`);
      if (!NAME.test(flags.secretName)) throw new UsageError(`--secret-name: "${flags.secretName}" is not a Kubernetes name (lower-case letters, digits, '-')`);
      if (flags.image.trim() === '' || /\s/.test(flags.image)) throw new UsageError(`--image: "${flags.image}" is not an image reference`);
      const manifests = k8sManifests({
        nodes: flags.nodes, workers: flags.workers, image: flags.image,
        ...(flags.zk !== undefined ? { zk: flags.zk.replace(/^zk:\/\//, '') } : {}), zkServers: flags.zkServers, zkImage: flags.zkImage,
        ...(flags.namespace !== undefined ? { namespace: flags.namespace } : {}),
        secretName: flags.secretName, drainSeconds: Math.ceil(flags.drain / 1000),
      });
      const text = flags.json
        ? `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests })}\n`
        : [
          '# tidepool cluster for Kubernetes, from `tidepool deploy k8s`. Checked against the Kubernetes API schemas, not run here.\n',
          `# First: kubectl create secret generic ${flags.secretName} --from-file=secret=./secret${flags.namespace ? ` --namespace ${flags.namespace}` : ''}\n`,
          ...manifests.map((m) => `---\n${stringify(m)}`),
        ].join('');
      if (flags.out !== undefined) writeFileSync(flags.out, text);
      else process.stdout.write(text);
    });
}
