/**
 * Kubernetes manifests for a tidepool cluster (`tidepool deploy k8s`): a ZooKeeper ensemble (or an
 * existing one), the nodes, and the monitor. The objects are written against the Kubernetes API's
 * types (kubernetes-models, a development dependency used for its types only: nothing of it is
 * loaded at run time), and the tests validate them against the API's schemas — they have not been
 * applied to a running cluster here.
 *
 * - ZooKeeper: a StatefulSet of the official `zookeeper` image; each pod takes its myid from its
 *   ordinal; a headless Service for the servers' stable names, a Service for clients.
 * - Nodes: a StatefulSet (stable names: the node id is the pod's name) listening on 0.0.0.0:7400 and
 *   advertising the pod's IP (downward API), with the cluster secret mounted from a Secret; readiness
 *   on /readyz and liveness on /healthz of the node's metrics port; the pre-stop hook sends SIGTERM
 *   to the node and waits for it to drain (its tasks move to the job's other nodes) within the
 *   termination grace period.
 * - Monitor: a Deployment of `tidepool monitor` with its dashboard and /metrics behind a Service.
 */
import type { IService } from 'kubernetes-models/v1/Service';
import type { IStatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';

export interface K8sOptions {
  /** Node pods. */
  nodes: number;
  /** Worker threads per node (and CPUs requested). */
  workers: number;
  /** The image with tidepool installed (`tidepool` on PATH). */
  image: string;
  /** An existing ensemble (host:port[,host:port…], as --zk takes it); without it a ZooKeeper StatefulSet of `zkServers` is generated. */
  zk?: string;
  zkServers: number;
  zkImage: string;
  namespace?: string;
  /** The Secret holding the cluster secret under the key `secret` (created by the operator). */
  secretName: string;
  /** Seconds a node has to drain when its pod is deleted. */
  drainSeconds: number;
}

/** A Kubernetes object, as written out. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string; namespace?: string };
}

export const NODE_PORT = 7400;
export const METRICS_PORT = 9464;
export const MONITOR_PORT = 7470;
const ZK_CLIENT = 2181;

const labels = (component: string) => ({ 'app.kubernetes.io/name': 'tidepool', 'app.kubernetes.io/component': component });

export function k8sManifests(o: K8sOptions): Manifest[] {
  const ns = o.namespace !== undefined ? { namespace: o.namespace } : {};
  const zkHosts = Array.from({ length: o.zkServers }, (_, i) => `tidepool-zk-${i}.tidepool-zk-hs${o.namespace ? `.${o.namespace}.svc` : ''}:${ZK_CLIENT}`);
  const zk = o.zk ?? zkHosts.join(',');
  const out: Manifest[] = [];
  if (o.zk === undefined) out.push(...zookeeper(o, ns));

  const nodesHeadless: IService = {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 'tidepool-nodes', ...ns, labels: labels('node') },
    spec: {
      clusterIP: 'None', selector: labels('node'), publishNotReadyAddresses: true,
      ports: [{ name: 'peers', port: NODE_PORT, targetPort: NODE_PORT }, { name: 'metrics', port: METRICS_PORT, targetPort: METRICS_PORT }],
    },
  };
  const nodes: IStatefulSet = {
    apiVersion: 'apps/v1', kind: 'StatefulSet',
    metadata: { name: 'tidepool-node', ...ns, labels: labels('node') },
    spec: {
      serviceName: 'tidepool-nodes', replicas: o.nodes, podManagementPolicy: 'Parallel',
      selector: { matchLabels: labels('node') },
      template: {
        metadata: { labels: labels('node') },
        spec: {
          terminationGracePeriodSeconds: o.drainSeconds + 15,
          containers: [{
            name: 'node', image: o.image,
            command: ['tidepool'],
            args: [
              'node', '--zk', zk, '--workers', String(o.workers), '--id', '$(POD_NAME)',
              '--listen', `0.0.0.0:${NODE_PORT}`, '--advertise', '$(POD_IP)', '--metrics-port', String(METRICS_PORT),
              '--secret-file', '/etc/tidepool/secret',
            ],
            env: [
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            ],
            ports: [{ name: 'peers', containerPort: NODE_PORT }, { name: 'metrics', containerPort: METRICS_PORT }],
            readinessProbe: { httpGet: { path: '/readyz', port: METRICS_PORT }, periodSeconds: 5, failureThreshold: 2 },
            livenessProbe: { httpGet: { path: '/healthz', port: METRICS_PORT }, periodSeconds: 10, failureThreshold: 3, initialDelaySeconds: 10 },
            // The drain: SIGTERM to the node (PID 1), then wait for it to hand its tasks over and exit.
            lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', `kill -TERM 1; i=0; while kill -0 1 2>/dev/null && [ $i -lt ${o.drainSeconds} ]; do sleep 1; i=$((i+1)); done`] } } },
            resources: { requests: { cpu: String(o.workers) } },
            volumeMounts: [{ name: 'secret', mountPath: '/etc/tidepool', readOnly: true }],
          }],
          volumes: [{ name: 'secret', secret: { secretName: o.secretName, items: [{ key: 'secret', path: 'secret' }], defaultMode: 0o400 } }],
        },
      },
    },
  };
  const monitor: IDeployment = {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: 'tidepool-monitor', ...ns, labels: labels('monitor') },
    spec: {
      replicas: 1, selector: { matchLabels: labels('monitor') },
      template: {
        metadata: { labels: labels('monitor') },
        spec: {
          containers: [{
            name: 'monitor', image: o.image, command: ['tidepool'],
            args: ['monitor', '--zk', zk, '--listen', `0.0.0.0:${MONITOR_PORT}`],
            env: [{ name: 'TIDEPOOL_SECRET', valueFrom: { secretKeyRef: { name: o.secretName, key: 'secret' } } }],
            ports: [{ name: 'dashboard', containerPort: MONITOR_PORT }],
            readinessProbe: { httpGet: { path: '/metrics', port: MONITOR_PORT }, periodSeconds: 10 },
          }],
        },
      },
    },
  };
  const monitorService: IService = {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 'tidepool-monitor', ...ns, labels: labels('monitor') },
    spec: { selector: labels('monitor'), ports: [{ name: 'dashboard', port: MONITOR_PORT, targetPort: MONITOR_PORT }] },
  };
  out.push(nodesHeadless, nodes, monitor, monitorService);
  return out;
}

function zookeeper(o: K8sOptions, ns: { namespace?: string }): Manifest[] {
  const servers = Array.from({ length: o.zkServers }, (_, i) => `server.${i + 1}=tidepool-zk-${i}.tidepool-zk-hs${o.namespace ? `.${o.namespace}.svc` : ''}:2888:3888;${ZK_CLIENT}`).join(' ');
  const headless: IService = {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 'tidepool-zk-hs', ...ns, labels: labels('zookeeper') },
    spec: {
      clusterIP: 'None', selector: labels('zookeeper'), publishNotReadyAddresses: true,
      ports: [{ name: 'client', port: ZK_CLIENT }, { name: 'quorum', port: 2888 }, { name: 'election', port: 3888 }],
    },
  };
  const set: IStatefulSet = {
    apiVersion: 'apps/v1', kind: 'StatefulSet',
    metadata: { name: 'tidepool-zk', ...ns, labels: labels('zookeeper') },
    spec: {
      serviceName: 'tidepool-zk-hs', replicas: o.zkServers, podManagementPolicy: 'Parallel',
      selector: { matchLabels: labels('zookeeper') },
      template: {
        metadata: { labels: labels('zookeeper') },
        spec: {
          containers: [{
            name: 'zookeeper', image: o.zkImage,
            // myid = the pod's ordinal + 1 (tidepool-zk-0 is server 1).
            command: ['/bin/sh', '-c', 'export ZOO_MY_ID=$((${HOSTNAME##*-} + 1)) && exec /docker-entrypoint.sh zkServer.sh start-foreground'],
            env: [
              { name: 'ZOO_SERVERS', value: servers },
              { name: 'ZOO_STANDALONE_ENABLED', value: o.zkServers > 1 ? 'false' : 'true' },
              { name: 'ZOO_4LW_COMMANDS_WHITELIST', value: 'srvr,ruok,mntr' },
              { name: 'ZOO_CFG_EXTRA', value: 'admin.enableServer=false' },
            ],
            ports: [{ name: 'client', containerPort: ZK_CLIENT }, { name: 'quorum', containerPort: 2888 }, { name: 'election', containerPort: 3888 }],
            readinessProbe: { exec: { command: ['zkServer.sh', 'status'] }, periodSeconds: 10, timeoutSeconds: 5 },
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
          }],
        },
      },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
    },
  };
  return [headless, set];
}
