// The `nrn-operator` command line: one zod schema per command (its flags, their environment
// variables and defaults), the help made from it, and the strict parse to typed flags.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import {
  DEFAULT_CLUSTER_KINDS,
  DEFAULT_NAMESPACED_KINDS,
  KIND_SETTINGS,
  parseKindList,
} from './domain/scope-classes/kinds.js';
import { DEFAULT_LOG_LEVEL, LOG_FORMATS, LOG_LEVELS } from './log.js';
import { DEFAULT_HEAP_GROWTH_PERCENT, MAX_HEAP_GROWTH_PERCENT } from './runtime/heap.js';

/** What the help and the README say of a flag; the schema it is registered on says the rest. */
export interface FlagMeta {
  /** What the value is, as the help names it (`DIR`, `PORT`); undefined: a boolean flag. */
  readonly value?: string;
  /** The environment variable that sets the flag when it is not given. */
  readonly env?: string;
  /** The env var is read by someone else (the Kubernetes client), not by this parser. */
  readonly envReadElsewhere?: boolean;
  /** The default as the help says it, where the schema has none of its own to show. */
  readonly defaultText?: string;
  readonly help: string;
}

export const flagMeta = z.registry<FlagMeta>();

const PORT = 'a port number, 0-65535';

// A string, not z.coerce.number(): Number('') is 0 and Number('0x50') is 80, both wrong here.
const port = () =>
  z
    .string()
    .regex(/^\d{1,5}$/, `not ${PORT}`)
    .transform(Number)
    .refine((p) => p <= 65535, `not ${PORT}`);

const text = () => z.string().min(1, 'empty');

const RATE = 'a number of scopes a second, above 0 and at most 10000';

const rolloutRate = () =>
  z
    .string()
    .regex(/^(\d+(\.\d*)?|\.\d+)$/, `not ${RATE}`)
    .transform(Number)
    .refine((r) => r > 0 && r <= 10_000, `not ${RATE}`)
    .default(10)
    .register(flagMeta, {
      value: 'N',
      env: 'NRN_SCOPE_CLASS_ROLLOUT_RATE',
      help: 'scopes a second a changed ScopeClass reaches (its rollout pace)',
    });

/** A list of the kinds a ScopeClass may template (domain/scope-classes/kinds.ts), checked. */
const classKinds = (scope: 'namespaced' | 'cluster') =>
  z
    .string()
    .superRefine((value, ctx) => {
      const list = parseKindList(value);
      if ('problem' in list) ctx.addIssue({ code: 'custom', message: list.problem });
    })
    .default(scope === 'namespaced' ? DEFAULT_NAMESPACED_KINDS : DEFAULT_CLUSTER_KINDS)
    .register(flagMeta, {
      value: 'LIST',
      env: KIND_SETTINGS[scope].env,
      ...(scope === 'cluster' ? { defaultText: 'none' } : {}),
      help:
        scope === 'namespaced'
          ? 'the namespaced kinds a ScopeClass may template in its resources, as group/Kind entries (Kind alone for the core group; * and ? match; ! refuses what the others admit), comma-separated; the default leaves out RBAC and admission kinds (docs/adr/0029-class-author-rights.md)'
          : 'the cluster-scoped kinds a ScopeClass may template in its resources, as the namespaced list spells them (the envelope namespace is always made); add one deliberately: every scope and tenant shares it',
    });

const GROWTH = `a whole percent from 0 to ${MAX_HEAP_GROWTH_PERCENT}`;

const heapGrowth = () =>
  z
    .string()
    .regex(/^\d{1,3}$/, `not ${GROWTH}`)
    .transform(Number)
    .refine((n) => n <= MAX_HEAP_GROWTH_PERCENT, `not ${GROWTH}`)
    .default(DEFAULT_HEAP_GROWTH_PERCENT)
    .register(flagMeta, {
      value: 'PERCENT',
      env: 'NRN_HEAP_GROWTH',
      help: "how far the process's JavaScript heap grows past what is live before a full garbage collection: lower holds less memory for more collections (0: V8's own choice, up to 300)",
    });

/** A whole number from 1 to `max`, as a flag spells it. */
const count = (max: number) =>
  z
    .string()
    .regex(/^\d{1,10}$/, `not a whole number from 1 to ${max}`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, `not a whole number from 1 to ${max}`);

const authMode = () =>
  z.enum(['kubernetes', 'static', 'none'], {
    error: 'not one of kubernetes, static, none',
  });

const metricsHost = () =>
  text().default('127.0.0.1').register(flagMeta, {
    value: 'HOST',
    env: 'NRN_METRICS_HOST',
    help: "/metrics, /healthz and /readyz listen here; in a pod use 0.0.0.0 so the kubelet's probes and Prometheus reach it",
  });

const noFacade = () =>
  z.boolean().default(false).register(flagMeta, { help: 'serve no HTTP facade' });

/** The facade's flags, shared by `local` and `run`; only the default auth differs. */
const facadeFlags = (defaultAuth: 'static' | 'kubernetes', authHelp: string) => ({
  'facade-port': port().default(8080).register(flagMeta, {
    value: 'PORT',
    env: 'NRN_FACADE_PORT',
    help: "the facade's port (0: any free port; the address is printed)",
  }),
  'facade-host': text().default('127.0.0.1').register(flagMeta, {
    value: 'HOST',
    env: 'NRN_FACADE_HOST',
    help: "the facade's address; in a pod use 0.0.0.0",
  }),
  'facade-auth': authMode()
    .default(defaultAuth)
    .register(flagMeta, { value: 'MODE', env: 'NRN_FACADE_AUTH', help: authHelp }),
  'facade-token-file': text().optional().register(flagMeta, {
    value: 'FILE',
    env: 'NRN_FACADE_TOKEN_FILE',
    help: 'static auth: YAML {tokens: [{name, token | sha256, operations}]}',
  }),
  'facade-tls-cert': text().optional().register(flagMeta, {
    value: 'FILE',
    env: 'NRN_FACADE_TLS_CERT',
    help: 'serve HTTPS with this PEM certificate (chain); read again every minute',
  }),
  'facade-tls-key': text().optional().register(flagMeta, {
    value: 'FILE',
    env: 'NRN_FACADE_TLS_KEY',
    help: "the certificate's PEM key; both or neither",
  }),
  'facade-max-streams': count(100_000).default(1000).register(flagMeta, {
    value: 'N',
    env: 'NRN_FACADE_MAX_STREAMS',
    help: 'status streams (GET /watch) this facade keeps open at most; past it 429 TOO_MANY_STREAMS',
  }),
  'facade-max-streams-per-caller': count(10_000).default(20).register(flagMeta, {
    value: 'N',
    env: 'NRN_FACADE_MAX_STREAMS_PER_CALLER',
    help: 'status streams one caller (token or user) may keep open at most',
  }),
  'facade-stream-buffer': count(1 << 30)
    .default(1024 * 1024)
    .register(flagMeta, {
      value: 'BYTES',
      env: 'NRN_FACADE_STREAM_BUFFER',
      help: 'bytes a status stream may have written and not yet taken by its reader; past it the reader is disconnected',
    }),
});

/** How `local` and `run` log. LOG_LEVEL and LOG_FORMAT, not NRN_*: the names most tools read. */
const logFlags = () => ({
  'log-level': z
    .enum(LOG_LEVELS, { error: `not one of ${LOG_LEVELS.join(', ')}` })
    .default(DEFAULT_LOG_LEVEL)
    .register(flagMeta, {
      value: 'LEVEL',
      env: 'LOG_LEVEL',
      help: 'the least severe log record written: trace, debug, info, warn, error, fatal or silent',
    }),
  'log-format': z
    .enum(LOG_FORMATS, { error: `not one of ${LOG_FORMATS.join(', ')}` })
    .default('auto')
    .register(flagMeta, {
      value: 'FORMAT',
      env: 'LOG_FORMAT',
      help: 'logs on stderr: json (one JSON object a line), pretty (coloured lines for a person), auto (pretty when stderr is a terminal, json otherwise)',
    }),
});

/** One certificate without its key would serve plain HTTP where HTTPS was meant. */
function tlsPair(
  flags: { 'facade-tls-cert'?: string | undefined; 'facade-tls-key'?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  if ((flags['facade-tls-cert'] === undefined) !== (flags['facade-tls-key'] === undefined)) {
    ctx.addIssue({ code: 'custom', message: '--facade-tls-cert and --facade-tls-key go together' });
  }
}

/** A webhook certificate without its key could not be served. */
function webhookTlsPair(
  flags: { 'webhook-tls-cert'?: string | undefined; 'webhook-tls-key'?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  if ((flags['webhook-tls-cert'] === undefined) !== (flags['webhook-tls-key'] === undefined)) {
    ctx.addIssue({
      code: 'custom',
      message: '--webhook-tls-cert and --webhook-tls-key go together',
    });
  }
}

export const WEBHOOK_CERTIFICATE_MODES = ['files', 'self-managed'] as const;

/** A self-managed certificate is made, not read: files given with it would be ignored. */
function webhookCertificateFiles(
  flags: {
    'webhook-certificate': (typeof WEBHOOK_CERTIFICATE_MODES)[number];
    'webhook-tls-cert'?: string | undefined;
  },
  ctx: z.RefinementCtx,
): void {
  if (flags['webhook-certificate'] === 'self-managed' && flags['webhook-tls-cert'] !== undefined) {
    ctx.addIssue({
      code: 'custom',
      message: '--webhook-tls-cert and --webhook-tls-key go with --webhook-certificate files',
    });
  }
}

const localSchema = z
  .object({
    'data-dir': text().default('.data/local').register(flagMeta, {
      value: 'DIR',
      env: 'NRN_DATA_DIR',
      help: "where the API server keeps its objects, CA, token and kubeconfig, and the facade's token",
    }),
    'api-port': port().default(6443).register(flagMeta, {
      value: 'PORT',
      env: 'NRN_API_PORT',
      help: "the API server's port (0: any free port; the address is printed)",
    }),
    host: text()
      .default('127.0.0.1')
      .register(flagMeta, { value: 'HOST', env: 'NRN_API_HOST', help: "the API server's address" }),
    'no-operator': z
      .boolean()
      .default(false)
      .register(flagMeta, { help: 'run no operator (the API server alone, or with the facade)' }),
    'no-facade': noFacade(),
    // Off unless asked for: several local planes often run side by side (tests, benchmarks).
    'metrics-port': port().optional().register(flagMeta, {
      value: 'PORT',
      env: 'NRN_METRICS_PORT',
      defaultText: 'not served',
      help: "serve the operator's /metrics, /healthz, /readyz here (0: any free port)",
    }),
    'metrics-host': metricsHost(),
    'scope-class-rollout-rate': rolloutRate(),
    'scope-class-namespaced-kinds': classKinds('namespaced'),
    'scope-class-cluster-kinds': classKinds('cluster'),
    'heap-growth': heapGrowth(),
    // Any free port: several local planes often run side by side; each start registers its own.
    'webhook-port': port().default(0).register(flagMeta, {
      value: 'PORT',
      env: 'NRN_WEBHOOK_PORT',
      help: "the operator's admission webhook on 127.0.0.1 (0: any free port); local registers it (ValidatingWebhookConfiguration nrn-operator, its CA in DIR/webhook) on each start",
    }),
    ...facadeFlags(
      'static',
      'static (--facade-token-file, or DIR/token made on first start), kubernetes (TokenReview + SubjectAccessReview), none (loopback only)',
    ),
    ...logFlags(),
  })
  .superRefine(tlsPair);

const runSchema = z
  .object({
    kubeconfig: text().optional().register(flagMeta, {
      value: 'FILE',
      env: 'KUBECONFIG',
      envReadElsewhere: true,
      defaultText: "KUBECONFIG, ~/.kube/config, or the pod's service account",
      help: 'the cluster to run against',
    }),
    context: text().optional().register(flagMeta, {
      value: 'NAME',
      env: 'NRN_CONTEXT',
      defaultText: "the kubeconfig's current context",
      help: 'the kubeconfig context to use',
    }),
    // Never the kubeconfig's namespace: every replica must find the same Lease and id counter.
    namespace: text().default('nrn-system').register(flagMeta, {
      value: 'NS',
      env: 'POD_NAMESPACE',
      help: 'where the Lease and the scope id counter live (a pod sets POD_NAMESPACE from its own)',
    }),
    'base-domain': text().optional().register(flagMeta, {
      value: 'DOMAIN',
      env: 'NRN_BASE_DOMAIN',
      defaultText: 'nrn.local',
      help: "the domain under which scopes' domains are made",
    }),
    'no-leader-election': z
      .boolean()
      .default(false)
      .register(flagMeta, { help: 'act at once, without the Lease (one replica only)' }),
    'metrics-port': port().default(8081).register(flagMeta, {
      value: 'PORT',
      env: 'NRN_METRICS_PORT',
      help: '/metrics, /healthz, /readyz (0: any free port)',
    }),
    'metrics-host': metricsHost(),
    'scope-class-rollout-rate': rolloutRate(),
    'scope-class-namespaced-kinds': classKinds('namespaced'),
    'scope-class-cluster-kinds': classKinds('cluster'),
    'heap-growth': heapGrowth(),
    'webhook-port': port().default(9443).register(flagMeta, {
      value: 'PORT',
      env: 'NRN_WEBHOOK_PORT',
      help: "the admission webhook's port (HTTPS, POST /validate); served with --webhook-certificate self-managed, or files and --webhook-tls-cert and --webhook-tls-key",
    }),
    'webhook-host': text().default('0.0.0.0').register(flagMeta, {
      value: 'HOST',
      env: 'NRN_WEBHOOK_HOST',
      help: "the admission webhook's address: the API server calls it through a Service",
    }),
    // files by default: the operator writes no Secret and no caBundle unless asked to, so a
    // certificate made elsewhere (cert-manager) is never fought over; deploy/ asks.
    'webhook-certificate': z
      .enum(WEBHOOK_CERTIFICATE_MODES, {
        error: `not one of ${WEBHOOK_CERTIFICATE_MODES.join(', ')}`,
      })
      .default('files')
      .register(flagMeta, {
        value: 'MODE',
        env: 'NRN_WEBHOOK_CERTIFICATE',
        help: "the webhook's certificate: files (--webhook-tls-cert and --webhook-tls-key, e.g. cert-manager's; none given: no webhook served) or self-managed (a CA and certificate the operator makes, keeps in Secret nrn-operator-webhook-tls of its namespace, renews, and writes into ValidatingWebhookConfiguration nrn-operator's caBundle)",
      }),
    'webhook-tls-cert': text().optional().register(flagMeta, {
      value: 'FILE',
      env: 'NRN_WEBHOOK_TLS_CERT',
      defaultText: 'no webhook served',
      help: "the webhook's PEM certificate (cert-manager's tls.crt); read again every minute",
    }),
    'webhook-tls-key': text().optional().register(flagMeta, {
      value: 'FILE',
      env: 'NRN_WEBHOOK_TLS_KEY',
      help: "the webhook certificate's PEM key; both or neither",
    }),
    'no-facade': noFacade(),
    ...facadeFlags(
      'kubernetes',
      'kubernetes (TokenReview + SubjectAccessReview), static (--facade-token-file), none (loopback only)',
    ),
    ...logFlags(),
  })
  .superRefine(tlsPair)
  .superRefine(webhookTlsPair)
  .superRefine(webhookCertificateFiles);

const generateCrdsSchema = z.object({
  out: text()
    .default('crds')
    .register(flagMeta, { value: 'DIR', help: 'write one YAML file per CRD here' }),
});

const none = z.object({});

interface CommandSpec {
  readonly summary: string;
  readonly schema: z.ZodObject;
}

export const COMMANDS = {
  local: {
    summary:
      'run the local control plane (a Kubernetes API server, durable in DIR), the operator and the facade; writes DIR/kubeconfig and prints one line when ready',
    schema: localSchema,
  },
  run: {
    summary: 'run the operator and the facade against a cluster (the kubeconfig, or in-cluster)',
    schema: runSchema,
  },
  crds: { summary: 'print the CustomResourceDefinitions (kubectl apply -f -)', schema: none },
  'generate crds': { summary: 'write one file per CRD into a folder', schema: generateCrdsSchema },
  version: { summary: 'print the version', schema: none },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

/** A command and its flags, every default filled in. */
export type Invocation = {
  [K in CommandName]: {
    readonly command: K;
    readonly flags: z.output<(typeof COMMANDS)[K]['schema']>;
  };
}[CommandName];

export type Outcome =
  | { readonly outcome: 'invoke'; readonly invocation: Invocation }
  /** Help asked for: print it on stdout, exit 0. */
  | { readonly outcome: 'print'; readonly text: string }
  /** A usage error: print it on stderr (one line, then the usage line), exit 2. */
  | { readonly outcome: 'refuse'; readonly text: string };

type Env = Readonly<Record<string, string | undefined>>;

interface Flag {
  readonly name: string;
  readonly schema: z.ZodType;
  readonly meta: FlagMeta;
}

function flagsOf(spec: CommandSpec): Flag[] {
  return Object.entries(spec.schema.shape).map(([name, schema]) => {
    const meta = flagMeta.get(schema as z.ZodType);
    if (meta === undefined) throw new Error(`flag --${name} has no help`);
    return { name, schema: schema as z.ZodType, meta };
  });
}

function usageLine(command: string | undefined): string {
  return command === undefined
    ? 'usage: nrn-operator <command> [options]; see nrn-operator --help'
    : `usage: nrn-operator ${command} [options]; see nrn-operator ${command} --help`;
}

function refuse(command: string | undefined, problem: string): Outcome {
  const who = command === undefined ? 'nrn-operator' : `nrn-operator ${command}`;
  return { outcome: 'refuse', text: `${who}: ${problem}\n${usageLine(command)}\n` };
}

/** The default the schema fills in, as text; undefined when it fills in none. */
function defaultOf(flag: Flag): string | undefined {
  if (flag.meta.defaultText !== undefined) return flag.meta.defaultText;
  const value: unknown = flag.schema.safeParse(undefined).data;
  return value === undefined ? undefined : String(value);
}

export function globalHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length)) + 2;
  const lines = Object.entries(COMMANDS).map(
    ([name, spec]) => `  ${name.padEnd(width)}${spec.summary}`,
  );
  return [
    'Usage: nrn-operator <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    "nrn-operator <command> --help prints the command's flags, their environment variables and defaults.",
    '',
  ].join('\n');
}

export function commandHelp(command: CommandName, env: Env = {}): string {
  const spec: CommandSpec = COMMANDS[command];
  const flags = flagsOf(spec);
  const names = flags.map(
    (f) => `--${f.name}${f.meta.value !== undefined ? ` ${f.meta.value}` : ''}`,
  );
  const width = Math.max(12, ...names.map((n) => n.length)) + 2;
  const lines: string[] = [];
  flags.forEach((flag, i) => {
    lines.push(`  ${(names[i] ?? '').padEnd(width)}${flag.meta.help}`);
    const facts: string[] = [];
    const fallback = defaultOf(flag);
    // A --no-* flag's default (false) says nothing its name does not.
    if (fallback !== undefined && flag.meta.value !== undefined) facts.push(`default ${fallback}`);
    if (flag.meta.env !== undefined) {
      const set = env[flag.meta.env];
      facts.push(
        set !== undefined && !flag.meta.envReadElsewhere
          ? `env ${flag.meta.env}, now ${set}`
          : `env ${flag.meta.env}`,
      );
    }
    if (facts.length > 0) lines.push(`  ${''.padEnd(width)}(${facts.join('; ')})`);
  });
  return [
    `Usage: nrn-operator ${command}${flags.length > 0 ? ' [options]' : ''}`,
    '',
    `${spec.summary[0]?.toUpperCase()}${spec.summary.slice(1)}.`,
    '',
    'Options:',
    ...lines,
    `  ${'-h, --help'.padEnd(width)}print this help`,
    '',
    'A flag given wins over its environment variable.',
    '',
  ].join('\n');
}

/** The command named by the first words of argv, and the arguments after it. */
function commandOf(argv: readonly string[]): { name: string; rest: readonly string[] } {
  const [first, second] = argv;
  if (first === 'generate' && second !== undefined && !second.startsWith('-')) {
    return { name: `generate ${second}`, rest: argv.slice(2) };
  }
  return { name: first ?? '', rest: argv.slice(1) };
}

function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

/** Which other commands take --name, for a message that says where it belongs. */
function ownersOf(name: string): string[] {
  return Object.entries(COMMANDS)
    .filter(([, spec]) => Object.hasOwn(spec.schema.shape, name))
    .map(([command]) => command);
}

/**
 * Parses the command line strictly: unknown or misplaced flags, missing and bad values are
 * refused with one line; a flag not given takes its environment variable, then its default.
 */
export function parseCommandLine(argv: readonly string[], env: Env = {}): Outcome {
  const [first] = argv;
  if (first === undefined) return refuse(undefined, 'no command given');
  if (first === '--help' || first === '-h' || first === 'help') {
    const asked = commandOf(argv.slice(1)).name;
    if (first === 'help' && isCommand(asked))
      return { outcome: 'print', text: commandHelp(asked, env) };
    return { outcome: 'print', text: globalHelp() };
  }
  if (first.startsWith('-'))
    return refuse(undefined, `${first} before the command; flags go after it`);
  const { name, rest } = commandOf(argv);
  if (!isCommand(name)) return refuse(undefined, `unknown command "${name}"`);
  const spec: CommandSpec = COMMANDS[name];
  const flags = new Map(flagsOf(spec).map((f) => [f.name, f]));
  const { tokens } = parseArgs({
    args: [...rest],
    strict: false,
    allowPositionals: true,
    tokens: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      ...Object.fromEntries(
        [...flags.values()].map((f) => [
          f.name,
          { type: f.meta.value === undefined ? ('boolean' as const) : ('string' as const) },
        ]),
      ),
    },
  });
  const given: Record<string, string | boolean> = {};
  let help = false;
  for (const token of tokens) {
    if (token.kind === 'positional') return refuse(name, `unexpected argument "${token.value}"`);
    if (token.kind !== 'option') continue;
    const flag = flags.get(token.name);
    if (token.name === 'help') {
      help = true;
    } else if (flag === undefined) {
      const owners = ownersOf(token.name);
      return refuse(
        name,
        owners.length > 0
          ? `${token.rawName} is a flag of ${owners.join(', ')}, not of ${name}`
          : `unknown flag ${token.rawName}`,
      );
    } else if (flag.meta.value === undefined) {
      if (token.inlineValue) return refuse(name, `${token.rawName} takes no value`);
      given[flag.name] = true;
    } else if (token.value === undefined || (!token.inlineValue && token.value.startsWith('--'))) {
      // `--api-port --no-facade` would otherwise take the next flag as the port.
      return refuse(name, `${token.rawName} needs a value (${flag.meta.value})`);
    } else {
      given[flag.name] = token.value;
    }
  }
  if (help) return { outcome: 'print', text: commandHelp(name, env) };
  const raw: Record<string, string | boolean> = { ...given };
  const fromEnv = new Map<string, string>();
  for (const flag of flags.values()) {
    const variable = flag.meta.env;
    if (raw[flag.name] !== undefined || variable === undefined || flag.meta.envReadElsewhere)
      continue;
    const value = env[variable];
    // An empty variable counts as unset, as a shell's `VAR= cmd` is meant.
    if (value === undefined || value === '') continue;
    raw[flag.name] = value;
    fromEnv.set(flag.name, variable);
  }
  const parsed = spec.schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = typeof issue?.path[0] === 'string' ? issue.path[0] : undefined;
    if (key === undefined) return refuse(name, issue?.message ?? 'invalid flags');
    const variable = fromEnv.get(key);
    const value = JSON.stringify(raw[key]);
    return refuse(
      name,
      variable !== undefined
        ? `${variable}=${value} (for --${key}): ${issue?.message}`
        : `--${key} ${value}: ${issue?.message}`,
    );
  }
  return {
    outcome: 'invoke',
    invocation: { command: name, flags: parsed.data } as Invocation,
  };
}

/** The configuration table of the README: every flag of `local` and `run`. */
export function configurationTable(): string {
  const rows = [
    '| command | flag | env var | default | meaning |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const command of ['local', 'run', 'generate crds'] as const) {
    for (const flag of flagsOf(COMMANDS[command])) {
      const value = flag.meta.value !== undefined ? ` ${flag.meta.value}` : '';
      const cells = [
        command,
        `\`--${flag.name}${value}\``,
        flag.meta.env !== undefined ? `\`${flag.meta.env}\`` : '',
        defaultOf(flag) ?? '',
        flag.meta.help.replaceAll('|', '\\|'),
      ];
      rows.push(`| ${cells.join(' | ')} |`);
    }
  }
  return `${rows.join('\n')}\n`;
}
