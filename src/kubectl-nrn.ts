#!/usr/bin/env node
// The `kubectl-nrn` command (`kubectl nrn ...` once it is on the PATH): parses the command
// line (src/plugin/command-line), reads the cluster the kubeconfig names, and prints what
// src/plugin renders. Every failure is one line on stderr and exit code 1.
import { parseNrn } from './api/index.js';
import {
  type Cluster,
  explainError,
  kindOf,
  listAll,
  openCluster,
  resourceOf,
} from './plugin/cluster.js';
import { type PluginInvocation, parsePluginArgs } from './plugin/command-line.js';
import { renderScopes, scopesOfApplication } from './plugin/scopes.js';
import { painter, wantsColour } from './plugin/status.js';
import { buildTree, renderTree } from './plugin/tree.js';
import { explain, readTarget } from './plugin/why.js';

/** A line for stderr and exit 1: a mistake of the caller's or an answer it must act on. */
class Refusal extends Error {}

async function run(invocation: PluginInvocation, cluster: Cluster): Promise<string> {
  const { kube, namespace } = cluster;
  const paint = painter(wantsColour(process.stdout, process.env));
  const now = Date.now();
  switch (invocation.command) {
    case 'tree': {
      const prefix = invocation.nrn === undefined ? undefined : parseNrn(invocation.nrn);
      if (invocation.nrn !== undefined && prefix === undefined) {
        throw new Refusal(
          `"${invocation.nrn.slice(0, 80)}" is not an NRN (organization=1:account=2...)`,
        );
      }
      const read = (kind: 'Application' | 'Scope' | 'Service') =>
        listAll(kube, resourceOf(kind), { namespace });
      const [applications, scopes, services] = await Promise.all([
        read('Application'),
        read('Scope'),
        read('Service'),
      ]);
      const root = buildTree({
        applications: applications.items,
        scopes: scopes.items,
        services: services.items,
        ...(prefix !== undefined ? { prefix } : {}),
      });
      const text = renderTree(root, paint);
      const cut = [applications, scopes, services].some((l) => l.truncated);
      if (text === '')
        process.stderr.write(`No applications, scopes or services found${where(namespace)}.\n`);
      if (cut)
        process.stderr.write(
          'kubectl nrn tree: more objects than it reads (100000 of a kind); narrow it with an NRN or -n\n',
        );
      return text;
    }
    case 'why': {
      const kind = kindOf(invocation.kind);
      if (kind === undefined) {
        throw new Refusal(
          `unknown kind "${invocation.kind.slice(0, 80)}": one of scope, service, application, servicespecification, scopeclass`,
        );
      }
      const object = await readTarget(kube, {
        kind,
        name: invocation.name,
        namespace: namespace ?? 'default',
      });
      if (typeof object === 'string') throw new Refusal(object);
      return explain(kube, kind, object, paint, now);
    }
    case 'scopes': {
      const { items } = await listAll(kube, resourceOf('Scope'), { namespace });
      const scopes = scopesOfApplication(items, invocation.app);
      const tabular = invocation.output === 'table' || invocation.output === 'wide';
      if (scopes.length === 0 && tabular) {
        process.stderr.write(
          `No scopes of application ${invocation.app} found${where(namespace)}.\n`,
        );
        return '';
      }
      return renderScopes(scopes, {
        output: invocation.output,
        allNamespaces: namespace === undefined,
        now,
        paint,
      });
    }
  }
}

const where = (namespace: string | undefined) =>
  namespace === undefined ? '' : ` in ${namespace} namespace`;

export async function main(argv: readonly string[]): Promise<number> {
  const parsed = parsePluginArgs(argv);
  if (parsed.outcome === 'print') {
    process.stdout.write(parsed.text);
    return 0;
  }
  if (parsed.outcome === 'refuse') {
    process.stderr.write(parsed.text);
    return 1;
  }
  const { invocation } = parsed;
  const who = `kubectl nrn ${invocation.command}`;
  let cluster: Cluster | undefined;
  try {
    cluster = await openCluster(invocation.connection);
    process.stdout.write(await run(invocation, cluster));
    return 0;
  } catch (error) {
    const line =
      error instanceof Refusal ? error.message : explainError(error, cluster?.kube.server);
    process.stderr.write(`${who}: ${line}\n`);
    return 1;
  } finally {
    cluster?.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // Only a bug gets here: still one line, the stack only when asked for.
    process.stderr.write(
      `kubectl nrn: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    if (process.env.NRN_DEBUG === '1') console.error(error);
    process.exitCode = 1;
  },
);
